// A private PostgreSQL cluster for tests: initdb into a fresh directory, started on a
// free loopback port with fsync on, stopped (immediate) and removed at the end. Run as
// the `postgres` user when the tests run as root (PostgreSQL refuses root). Nothing is
// installed here: scripts/setup.sh installs Debian's postgresql; without it Start()
// fails, naming what is missing.
//
// Under ctest the tests share one cluster: a fixture (baton_pg_cluster start/stop, see
// CMakeLists.txt) starts it and names it in the file $BATON_TEST_PG, and Start() attaches
// to that cluster instead of starting one per test process (initdb alone takes seconds).
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace baton::testing {

class PgCluster {
 public:
  PgCluster() = default;
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;
  ~PgCluster() { Stop(); }

  // Creates and starts the cluster with `password` for the superuser `baton` (password
  // authentication over TCP). Returns "" or what went wrong.
  std::string Start(const std::string& password = "s3cret-pw") {
    if (const char* shared = std::getenv("BATON_TEST_PG"); shared != nullptr && *shared) {
      return Attach(shared);
    }
    return StartOwn(password);
  }
  // A cluster of this process's own, even under ctest: for a test that stops it.
  std::string StartOwn(const std::string& password = "s3cret-pw") {
    bin_ = BinDir();
    if (bin_.empty()) {
      return "PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin/initdb); "
             "run scripts/setup.sh";
    }
    char tmpl[] = "/tmp/baton-pg.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    dir_ = tmpl;
    password_ = password;
    port_ = FreePort();
    std::ofstream(dir_ + "/pw") << password << "\n";
    if (geteuid() == 0 && Run("chown -R postgres " + dir_) != 0) return "chown failed";
    if (Run(As() + bin_ + "/initdb -D " + dir_ + "/data -U baton --pwfile=" + dir_ +
            "/pw --auth=scram-sha-256 -E UTF8 --no-instructions > " + dir_ + "/initdb.log 2>&1") !=
        0) {
      return "initdb failed: " + Slurp(dir_ + "/initdb.log");
    }
    return StartServer();
  }

  // Stops the server as a crash would (immediate), keeping its data, and Resume() starts
  // it again on the same port: what a client sees when its database goes away a while.
  // Only for a cluster this object started. "" or what went wrong.
  std::string Pause() {
    if (!started_ || attached_) return "not a cluster of this process";
    Run(As() + bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop > /dev/null 2>&1");
    started_ = false;
    return "";
  }
  std::string Resume() { return StartServer(); }

  void Stop() {
    if (dir_.empty() || attached_) return;
    if (started_) {
      Run(As() + bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop > /dev/null 2>&1");
      started_ = false;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }

  // Writes what Attach() needs to `path`, and leaves the cluster running when this object
  // goes: the fixture's `stop` stops it (StopShared).
  bool Detach(const std::string& path) {
    std::ofstream(path) << port_ << " " << password_ << " " << dir_ << " " << bin_ << "\n";
    attached_ = true;
    return std::filesystem::exists(path);
  }
  // Stops and removes the cluster that `path` names (written by Detach).
  static void StopShared(const std::string& path) {
    PgCluster c;
    if (!c.Attach(path).empty()) return;
    c.attached_ = false;
    c.started_ = true;
    c.Stop();
    std::filesystem::remove(path);
  }

  // A new schema named `name` in the `postgres` database; a URL whose connections use it
  // (search_path), so tests sharing the cluster never see each other's tables. "" on
  // failure.
  std::string NewSchema(const std::string& name) {
    const std::string command = "PGPASSWORD=" + password_ + " " + bin_ +
                                "/psql -q -h 127.0.0.1 -p " + std::to_string(port_) +
                                " -U baton -d postgres -c 'CREATE SCHEMA " + name + "' 2>&1";
    if (Run(command) != 0) return "";
    return Url() + "?options=-csearch_path%3D" + name;
  }

  int port() const { return port_; }
  const std::string& password() const { return password_; }
  // A URL for the superuser on the `postgres` database (or `password` instead).
  std::string Url(const std::string& password) const {
    return "postgresql://baton:" + password + "@127.0.0.1:" + std::to_string(port_) + "/postgres";
  }
  std::string Url() const { return Url(password_); }

  // A loopback port nothing listens on (bound, then released).
  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    close(fd);
    return port;
  }

 private:
  static std::string As() { return geteuid() == 0 ? "runuser -u postgres -- " : ""; }
  std::string StartServer() {
    const std::string opts = "-c listen_addresses=127.0.0.1 -c port=" + std::to_string(port_) +
                             " -c unix_socket_directories=" + dir_ + " -c fsync=on";
    if (Run(As() + bin_ + "/pg_ctl -D " + dir_ + "/data -w -t 60 -l " + dir_ + "/server.log -o '" +
            opts + "' start > /dev/null 2>&1") != 0) {
      return "pg_ctl start failed: " + Slurp(dir_ + "/server.log");
    }
    started_ = true;
    return "";
  }
  static int Run(const std::string& command) { return std::system(command.c_str()); }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The newest installed version's bin directory, or "".
  static std::string BinDir() {
    std::string best;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string bin = e.path().string() + "/bin";
      if (!std::filesystem::exists(bin + "/initdb")) continue;
      const auto version = [](const std::string& p) {
        return std::atoi(std::filesystem::path(p).parent_path().filename().c_str());
      };
      if (best.empty() || version(bin) > version(best)) best = bin;
    }
    return best;
  }

  std::string Attach(const std::string& path) {
    std::ifstream in(path);
    if (!(in >> port_ >> password_ >> dir_ >> bin_)) {
      return "the shared test cluster's file " + path + " is missing or unreadable";
    }
    attached_ = true;
    return "";
  }

  std::string bin_, dir_, password_;
  int port_ = 0;
  bool started_ = false;
  bool attached_ = false;  // another process started the cluster and stops it
};

}  // namespace baton::testing
