// https in the http runner against a TLS server on loopback: the test server of
// tests/support/http_test_server.h behind OpenSSL, with a test CA and leaf certificates
// made at start-up with OpenSSL's C API and written to a temporary directory.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runners/http_runner.h"
#include "support/http_test_server.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::CallRecord;
using testing::Received;
using testing::Response;
using testing::ServerConn;
using testing::TestServer;

// --- A test PKI -----------------------------------------------------------------------

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr NewKey() {
  return KeyPtr(EVP_EC_gen("P-256"), EVP_PKEY_free);
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  ASSERT_NE(ext, nullptr) << OBJ_nid2sn(nid) << " = " << value;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key`, signed by `issuer` and `issuer_key` (self-signed when null).
// A CA when `san` is empty, else a server certificate for those subjectAltNames.
CertPtr NewCert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
                const std::string& san, long serial) {
  CertPtr cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);  // v3
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (san.empty()) {
    AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    AddExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
    AddExtension(cert.get(), signer, NID_subject_alt_name, san);
  }
  EXPECT_GT(X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()), 0);
  return cert;
}

void WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  if (cert) {
    EXPECT_EQ(PEM_write_X509(f, cert), 1);
  }
  if (key) {
    EXPECT_EQ(PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr), 1);
  }
  std::fclose(f);
}

// A test CA and two server certificates it signed, as PEM files in a temporary directory.
struct TestPki {
  std::string dir;
  std::string ca_file;  // the CA certificate
  std::string leaf;     // 127.0.0.1 and localhost: certificate and key
  std::string other;    // only other.example: certificate and key
  std::string not_pem;  // a file without a certificate

  void Create() {
    char tmpl[] = "/tmp/baton-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    ca_file = dir + "/ca.pem";
    leaf = dir + "/leaf.pem";
    other = dir + "/other.pem";
    not_pem = dir + "/not.pem";
    KeyPtr ca_key = NewKey();
    CertPtr ca = NewCert("Baton Test CA", ca_key.get(), nullptr, nullptr, "", 1);
    WritePem(ca_file, ca.get(), nullptr);
    KeyPtr leaf_key = NewKey();
    CertPtr leaf_cert = NewCert("127.0.0.1", leaf_key.get(), ca.get(), ca_key.get(),
                                "IP:127.0.0.1,DNS:localhost", 2);
    WritePem(leaf, leaf_cert.get(), leaf_key.get());
    KeyPtr other_key = NewKey();
    CertPtr other_cert =
        NewCert("other.example", other_key.get(), ca.get(), ca_key.get(), "DNS:other.example", 3);
    WritePem(other, other_cert.get(), other_key.get());
    std::FILE* f = std::fopen(not_pem.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a certificate\n", f);
    std::fclose(f);
  }
};

TestPki* pki = nullptr;

// --- A TLS server ----------------------------------------------------------------------

// How a TLS connection ends after the response.
enum class End {
  kCloseNotify,  // close_notify, then the socket closes
  kAbrupt,       // the socket closes without close_notify
  kHold,         // nothing until the server is destroyed
};

class TlsConn : public ServerConn {
 public:
  TlsConn(SSL* ssl, End end, std::function<void()> hold)
      : ssl_(ssl), end_(end), hold_(std::move(hold)) {}
  ~TlsConn() override { SSL_free(ssl_); }
  long Read(char* buf, size_t n) override { return SSL_read(ssl_, buf, static_cast<int>(n)); }
  long Write(const char* buf, size_t n) override {
    return SSL_write(ssl_, buf, static_cast<int>(n));
  }
  void EndResponse() override {
    if (end_ == End::kCloseNotify) SSL_shutdown(ssl_);
    if (end_ == End::kHold) hold_();
  }

 private:
  SSL* ssl_;
  End end_;
  std::function<void()> hold_;
};

// A server context with one certificate; records the SNI name of every handshake.
class TlsServerContext {
 public:
  explicit TlsServerContext(const std::string& pem) : ctx_(SSL_CTX_new(TLS_server_method())) {
    EXPECT_EQ(SSL_CTX_use_certificate_chain_file(ctx_, pem.c_str()), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx_, pem.c_str(), SSL_FILETYPE_PEM), 1);
  }
  ~TlsServerContext() { SSL_CTX_free(ctx_); }

  // Connections for a TestServer. `hold` runs for End::kHold.
  TestServer::ConnFactory Factory(End end = End::kCloseNotify,
                                  std::function<void()> hold = nullptr) {
    return [this, end, hold](int fd) -> std::unique_ptr<ServerConn> {
      SSL* ssl = SSL_new(ctx_);
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) != 1) {  // e.g. the client refused the certificate
        ERR_clear_error();
        SSL_free(ssl);
        return nullptr;
      }
      const char* sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
      {
        std::lock_guard lock(mu_);
        names_.push_back(sni ? sni : "");
      }
      return std::make_unique<TlsConn>(ssl, end, hold);
    };
  }
  std::vector<std::string> server_names() {
    std::lock_guard lock(mu_);
    return names_;
  }

 private:
  SSL_CTX* ctx_;
  std::mutex mu_;
  std::vector<std::string> names_;
};

// A server that takes the connection and the first bytes of the handshake, then says
// nothing until it is destroyed. `arrived` is set when the ClientHello came.
class StalledServer {
 public:
  StalledServer()
      : server_([](const Received&) { return std::string(); },
                [this](int fd) -> std::unique_ptr<ServerConn> {
                  char byte;
                  if (read(fd, &byte, 1) == 1) arrived_.set_value();
                  server_.Hang();
                  return nullptr;
                }) {}
  std::string Url() const { return server_.Url("/", "https"); }
  bool WaitArrived() { return future_.wait_for(testing::kHttpWait) == std::future_status::ready; }

 private:
  std::promise<void> arrived_;
  std::future<void> future_ = arrived_.get_future();
  TestServer server_;
};

// --- Tests -----------------------------------------------------------------------------

class HttpTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    signal(SIGPIPE, SIG_IGN);  // OpenSSL writes to sockets with write(2)
    pki = new TestPki;
    pki->Create();
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    std::filesystem::remove_all(pki->dir, ignored);
    delete pki;
    pki = nullptr;
  }

  static HttpRunnerOptions Trusting() {
    HttpRunnerOptions options = testing::LoopbackAllowed();
    options.ca_file = pki->ca_file;
    return options;
  }
  RunResult Run(Json spec) { return testing::RunHttp(*runner_, std::move(spec)); }

  std::unique_ptr<Runner> runner_ = NewHttpRunner(Trusting());
};

TEST_F(HttpTlsTest, GetJson) {
  TlsServerContext tls(pki->leaf);
  TestServer server(
      [](const Received&) {
        return Response(200, R"({"secure": true, "n": [1]})",
                        {{"Content-Type", "application/json"}});
      },
      tls.Factory());
  RunResult r = Run({{"request", {{"url", server.Url("/x?q=1", "https")}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 200);
  EXPECT_EQ(r.output["body"], Json::parse(R"({"secure": true, "n": [1]})"));
  Received got = server.requests().at(0);
  EXPECT_EQ(got.target, "/x?q=1");
  EXPECT_EQ(got.Header("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(tls.server_names(), std::vector<std::string>{""});  // no SNI for an address
}

TEST_F(HttpTlsTest, PostWithBody) {
  TlsServerContext tls(pki->leaf);
  TestServer server(
      [](const Received& req) {
        return Response(201, req.body, {{"Content-Type", req.Header("content-type")}});
      },
      tls.Factory());
  Json body = {{"model", "m1"}, {"n", {1, 2.5, nullptr}}};
  RunResult r = Run(
      {{"request", {{"method", "POST"}, {"url", server.Url("/echo", "https")}, {"body", body}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 201);
  EXPECT_EQ(r.output["body"], body);
  EXPECT_EQ(server.requests().at(0).method, "POST");
}

TEST_F(HttpTlsTest, HostNameGetsSniAndIsVerified) {
  TlsServerContext tls(pki->leaf);
  TestServer server([](const Received&) { return Response(200, "hi"); }, tls.Factory());
  RunResult r =
      Run({{"request", {{"url", "https://localhost:" + std::to_string(server.port()) + "/"}}}});
  if (r.status.code() == "NETWORK" && r.status.message().find("cannot") != std::string::npos) {
    GTEST_SKIP() << "localhost does not reach 127.0.0.1 here: " << r.status.ToString();
  }
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["body"], "hi");
  EXPECT_EQ(tls.server_names(), std::vector<std::string>{"localhost"});
}

TEST_F(HttpTlsTest, RedirectsBetweenHttpAndHttps) {
  TlsServerContext tls(pki->leaf);
  TestServer plain_target([](const Received& req) { return Response(200, "plain " + req.target); });
  TestServer secure(
      [&](const Received& req) {
        if (req.target == "/down") {
          return Response(307, "", {{"Location", plain_target.Url("/landed")}});
        }
        return Response(200, "secure " + req.target + " " + req.Header("authorization"));
      },
      tls.Factory());
  TestServer plain([&](const Received&) {
    return Response(302, "", {{"Location", secure.Url("/up", "https")}});
  });

  RunResult up =
      Run({{"request",
            {{"url", plain.Url("/start")}, {"headers", {{"Authorization", "Bearer secret"}}}}}});
  ASSERT_TRUE(up.status.ok()) << up.status.ToString();
  EXPECT_EQ(up.output["body"], "secure /up <none>");  // another origin: no credentials

  RunResult down = Run({{"request", {{"url", secure.Url("/down", "https")}}}});
  ASSERT_TRUE(down.status.ok()) << down.status.ToString();
  EXPECT_EQ(down.output["body"], "plain /landed");
}

TEST_F(HttpTlsTest, RedirectToHttpsIsCheckedByTheEgressGuard) {
  HttpRunnerOptions options = Trusting();
  options.allow = *runners::ParseCidrList("127.0.0.1/32");
  runner_ = NewHttpRunner(options);
  TestServer plain([](const Received&) {
    return Response(302, "", {{"Location", "https://127.0.0.2:1/"}});
  });
  RunResult r = Run({{"request", {{"url", plain.Url("/")}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_EQ(r.status.message(),
            "GET https://127.0.0.2:1/: refused by the egress guard: 127.0.0.2 is a loopback "
            "address (allow it with BATON_HTTP_ALLOW)");
}

TEST_F(HttpTlsTest, UntrustedCertificateFails) {
  runner_ = NewHttpRunner(testing::LoopbackAllowed());  // the system trust store only
  TlsServerContext tls(pki->leaf);
  TestServer server([](const Received&) { return Response(200, "secret"); }, tls.Factory());
  RunResult r = Run({{"request", {{"url", server.Url("/", "https")}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_EQ(r.status.message(), "GET " + server.Url("/", "https") +
                                    ": TLS: certificate verify failed for 127.0.0.1: unable to "
                                    "get local issuer certificate");
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpTlsTest, NameMismatchFails) {
  TlsServerContext tls(pki->other);  // for other.example only
  TestServer server([](const Received&) { return Response(200, "secret"); }, tls.Factory());
  RunResult r = Run({{"request", {{"url", server.Url("/", "https")}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_EQ(r.status.message(),
            "GET " + server.Url("/", "https") +
                ": TLS: certificate verify failed for 127.0.0.1: IP address mismatch");

  RunResult named =
      Run({{"request", {{"url", "https://localhost:" + std::to_string(server.port()) + "/"}}}});
  EXPECT_EQ(named.status.code(), "NETWORK");
  if (named.status.message().find("cannot") == std::string::npos) {
    EXPECT_NE(named.status.message().find(
                  "TLS: certificate verify failed for localhost: hostname mismatch"),
              std::string::npos)
        << named.status.message();
  }
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpTlsTest, StalledHandshakeTimesOut) {
  StalledServer server;
  RunResult r = Run({{"request", {{"url", server.Url()}, {"timeout", "300ms"}}}});
  EXPECT_EQ(r.status.code(), "TIMEOUT");
  EXPECT_EQ(r.status.message(),
            "GET " + server.Url() + ": no response within 300ms (TLS handshake)");
}

TEST_F(HttpTlsTest, CancelDuringHandshake) {
  StalledServer server;
  CallRecord call;
  runner_->Start(testing::HttpRequest({{"request", {{"url", server.Url()}}}}, "tls-cancel"),
                 call.Callbacks());
  ASSERT_TRUE(server.WaitArrived());  // the ClientHello is there: the handshake is under way
  runner_->Cancel("tls-cancel");
  EXPECT_EQ(call.Wait().status.code(), "CANCELLED");
  runner_->Shutdown();  // joins the I/O thread: every callback has been made
  EXPECT_EQ(call.done_count(), 1);
}

TEST_F(HttpTlsTest, ServerThatNeverClosesDoesNotHoldTheResult) {
  TlsServerContext tls(pki->leaf);
  TestServer* self = nullptr;
  TestServer server([](const Received&) { return Response(200, "done"); },
                    tls.Factory(End::kHold, [&self] { self->Hang(); }));
  self = &server;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = Run({{"request", {{"url", server.Url("/", "https")}, {"timeout", "20s"}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["body"], "done");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);  // the close_notify wait is bounded

  // Even when the request's timeout passes during that wait, the response stands.
  RunResult quick = Run({{"request", {{"url", server.Url("/", "https")}, {"timeout", "100ms"}}}});
  EXPECT_TRUE(quick.status.ok() || quick.status.code() == "TIMEOUT") << quick.status.ToString();
}

TEST_F(HttpTlsTest, BodyUntilCloseNeedsCloseNotify) {
  const std::string unframed = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it";
  TlsServerContext tls(pki->leaf);
  TestServer clean([&](const Received&) { return unframed; }, tls.Factory(End::kCloseNotify));
  RunResult r = Run({{"request", {{"url", clean.Url("/", "https")}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["body"], "all of it");

  TestServer cut([&](const Received&) { return unframed; }, tls.Factory(End::kAbrupt));
  RunResult truncated = Run({{"request", {{"url", cut.Url("/", "https")}}}});
  EXPECT_EQ(truncated.status.code(), "NETWORK");
  EXPECT_EQ(truncated.status.message(), "GET " + cut.Url("/", "https") +
                                            ": reading the response: the TLS stream was truncated");

  // With a Content-Length the response is whole without close_notify.
  TestServer framed([](const Received&) { return Response(200, "framed"); },
                    tls.Factory(End::kAbrupt));
  RunResult ok = Run({{"request", {{"url", framed.Url("/", "https")}}}});
  ASSERT_TRUE(ok.status.ok()) << ok.status.ToString();
  EXPECT_EQ(ok.output["body"], "framed");
}

TEST_F(HttpTlsTest, UnusableCaFile) {
  HttpRunnerOptions options = testing::LoopbackAllowed();
  options.ca_file = pki->dir + "/missing.pem";
  runner_ = NewHttpRunner(options);
  RunResult r = Run({{"request", {{"url", "https://127.0.0.1:1/"}}}});
  EXPECT_EQ(r.status.code(), "VALIDATION");
  EXPECT_EQ(r.status.message(), "GET https://127.0.0.1:1/: cannot read CA file '" + pki->dir +
                                    "/missing.pem': No such file or directory");
}

TEST_F(HttpTlsTest, CaFileFromEnvironment) {
  unsetenv("BATON_HTTP_ALLOW");
  unsetenv("BATON_CA_FILE");
  EXPECT_EQ(HttpRunnerOptionsFromEnv()->ca_file, "");

  setenv("BATON_CA_FILE", pki->ca_file.c_str(), 1);
  auto good = HttpRunnerOptionsFromEnv();
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->ca_file, pki->ca_file);

  const std::string missing = pki->dir + "/missing.pem";
  setenv("BATON_CA_FILE", missing.c_str(), 1);
  auto absent = HttpRunnerOptionsFromEnv();
  EXPECT_EQ(absent.status().code(), "VALIDATION");
  EXPECT_EQ(absent.status().message(),
            "BATON_CA_FILE: cannot read CA file '" + missing + "': No such file or directory");

  setenv("BATON_CA_FILE", pki->not_pem.c_str(), 1);
  auto junk = HttpRunnerOptionsFromEnv();
  EXPECT_EQ(junk.status().message(),
            "BATON_CA_FILE: no PEM certificate in CA file '" + pki->not_pem + "'");

  setenv("BATON_CA_FILE", pki->dir.c_str(), 1);  // a directory
  EXPECT_EQ(HttpRunnerOptionsFromEnv().status().code(), "VALIDATION");
  unsetenv("BATON_CA_FILE");
}

}  // namespace
}  // namespace baton
