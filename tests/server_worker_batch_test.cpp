// Batch frames over the worker WebSocket against the real server, spoken by the test
// with a raw WebSocket client (docs/worker-protocol.md, "batch"): a worker that says
// `batching` may get several commands in one frame (those of one commit in one) and may
// answer several in one; one
// that does not never gets a batch; a bad message fails its whole frame and changes
// nothing; a stale result inside a batch is refused alone.
#include "support/process_util.h"
#include "support/server_process.h"

#include <baton/json.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace baton {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using testing::MakeTempDir;
using testing::ServerProcess;

constexpr const char* kWorkflow = R"(
name: job
steps:
  - id: work
    type: command
    command: bench.work
    data: {n: "{{ inputs.n }}"}
    retry: {max_attempts: 1}
output: {got: "{{ steps.work.output.got }}"}
)";

// One `batch` frame of the message texts.
std::string BatchOf(const std::vector<std::string>& texts) {
  std::string frame = R"({"type":"batch","messages":[)";
  for (size_t i = 0; i < texts.size(); ++i) frame += (i ? "," : "") + texts[i];
  return frame + "]}";
}

// A worker spoken by hand: every frame it reads is kept as it came.
class RawWorker {
 public:
  RawWorker(const std::string& url, const std::string& token) : ws_(ioc_) {
    const std::string hostport = url.substr(url.find("//") + 2);
    const std::string host = hostport.substr(0, hostport.find(':'));
    const std::string port = hostport.substr(hostport.find(':') + 1);
    net::ip::tcp::resolver resolver(ioc_);
    net::connect(ws_.next_layer(), resolver.resolve(host, port));
    ws_.set_option(
        beast::websocket::stream_base::decorator([token](beast::websocket::request_type& req) {
          req.set(beast::http::field::authorization, "Bearer " + token);
        }));
    ws_.handshake(hostport, "/api/v1/workers/connect");
  }
  void Send(const std::string& text) {
    ws_.text(true);
    ws_.write(net::buffer(text));
  }
  void Send(const Json& message) { Send(message.dump()); }
  // False once the connection is gone, where Send would throw.
  bool TrySend(const std::string& text) {
    beast::error_code ec;
    ws_.text(true);
    ws_.write(net::buffer(text), ec);
    return !ec;
  }
  Json ReadFrame() {
    beast::flat_buffer buffer;
    ws_.read(buffer);
    return Json::parse(beast::buffers_to_string(buffer.data()));
  }
  // The messages of the next frame (a batch's, or the one message).
  std::vector<Json> ReadMessages(bool* was_batch = nullptr) {
    Json frame = ReadFrame();
    if (was_batch) *was_batch = frame["type"] == "batch";
    if (frame["type"] != "batch") return {frame};
    return frame["messages"].get<std::vector<Json>>();
  }
  Json Register(const std::string& id, int capacity, bool batching) {
    Json reg = {{"type", "register"},
                {"workerId", id},
                {"capacity", capacity},
                {"commands", {"bench.work"}}};
    if (batching) reg["batching"] = true;
    Send(reg);
    return ReadFrame();
  }

 private:
  net::io_context ioc_;
  beast::websocket::stream<net::ip::tcp::socket> ws_;
};

class ServerWorkerBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto r = server_->Admin().Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    auto token = server_->Admin().Call("POST", "/api/v1/tokens",
                                       {{"name", "workers"}, {"scopes", {"worker"}}});
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    worker_token_ = (*token)["token"];
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::vector<std::string> SubmitMany(int n) {
    Json items = Json::array();
    for (int i = 0; i < n; ++i) items.push_back({{"workflow", "job"}, {"input", {{"n", i}}}});
    auto r = server_->Admin().Call("POST", "/api/v1/executions/batch", {{"executions", items}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::vector<std::string> ids;
    if (r.ok()) {
      for (const Json& e : (*r)["executions"]) ids.push_back(e["id"]);
    }
    return ids;
  }
  // Reads frames until `n` commands came; their assignment ids by execution id.
  std::map<std::string, std::string> ReadCommands(RawWorker& w, size_t n, int* batch_frames) {
    std::map<std::string, std::string> by_execution;
    while (by_execution.size() < n) {
      bool batch = false;
      for (const Json& m : w.ReadMessages(&batch)) {
        if (m["type"] != "command") continue;
        by_execution[m["execution"]["executionId"]] = m["assignmentId"];
      }
      *batch_frames += batch ? 1 : 0;
    }
    return by_execution;
  }
  Json Execution(const std::string& id) {
    auto r = server_->Admin().Call("GET", "/api/v1/executions/" + id);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Json();
  }

  std::string dir_;
  std::string worker_token_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerWorkerBatch, AWorkerAnswersManyCommandsInOneFrame) {
  const std::vector<std::string> ids = SubmitMany(20);
  ASSERT_EQ(ids.size(), 20u);
  RawWorker w(server_->url(), worker_token_);
  Json registered = w.Register("w-batch", 20, /*batching=*/true);
  ASSERT_EQ(registered["type"], "registered") << registered.dump();
  EXPECT_EQ(registered["batching"], true);  // the server reads batch frames
  int batch_frames = 0;
  std::map<std::string, std::string> commands = ReadCommands(w, ids.size(), &batch_frames);
  // Twenty commands placed at once reach a batching worker in fewer than twenty frames
  // only when they are ready within one turn; either way each comes exactly once.
  ASSERT_EQ(commands.size(), ids.size());
  RecordProperty("batch_frames", batch_frames);

  std::vector<std::string> texts;
  for (const auto& [execution, assignment] : commands) {
    texts.push_back(
        Json{{"type", "command.ack"}, {"assignmentId", assignment}, {"status", "accepted"}}.dump());
    texts.push_back(Json{{"type", "command.result"},
                         {"assignmentId", assignment},
                         {"status", "success"},
                         {"output", {{"got", execution}}}}
                        .dump());
  }
  const std::string frame = BatchOf(texts);
  w.Send(frame);  // 40 messages in one frame
  for (const std::string& id : ids) {
    Json done = testing::WaitForExecutionStatus(server_->Admin(), id, "completed");
    EXPECT_EQ(done["output"]["got"], id);
  }
  // The same results again, in one frame: each is stale now, refused alone and by name.
  w.Send(frame);
  std::set<std::string> stale;
  while (stale.size() < commands.size()) {
    for (const Json& m : w.ReadMessages()) {
      ASSERT_EQ(m["type"], "error") << m.dump();
      EXPECT_EQ(m["code"], "STALE_ASSIGNMENT");
      stale.insert(m["assignmentId"].get<std::string>());
    }
  }
  for (const std::string& id : ids) EXPECT_EQ(Execution(id)["status"], "completed");
}

// Regression: the commands one commit makes durable go out in one frame. The first of
// them used to have the flush posted straight to the I/O thread, which wrote it alone
// while the engine was still sending the others; the worker answered each frame on its
// own, and a busy worker's trains of commands split into ever smaller frames and commits.
TEST_F(ServerWorkerBatch, TheCommandsOfOneCommitGoOutInOneFrame) {
  constexpr size_t kCapacity = 50;
  RawWorker w(server_->url(), worker_token_);
  Json registered = w.Register("w-trains", kCapacity, /*batching=*/true);
  ASSERT_EQ(registered["type"], "registered") << registered.dump();
  const std::vector<std::string> ids = SubmitMany(3 * kCapacity);
  ASSERT_EQ(ids.size(), 3u * kCapacity);
  // The first 50 come as the submit's items commit (one commit or several); the rest wait.
  std::set<std::string> assignments;
  while (assignments.size() < kCapacity) {
    for (const Json& m : w.ReadMessages()) {
      ASSERT_EQ(m["type"], "command") << m.dump();
      assignments.insert(m["assignmentId"].get<std::string>());
    }
  }
  ASSERT_EQ(assignments.size(), kCapacity);
  for (int round = 1; round <= 2; ++round) {
    // Their results in one frame: one turn frees the 50 slots and places 50 waiting jobs
    // in one commit, whose commands are the next frame, whole.
    std::vector<std::string> texts;
    for (const std::string& a : assignments) {
      texts.push_back(Json{
          {"type", "command.result"},
          {"assignmentId", a},
          {"status", "success"},
          {"output",
           {{"got", a}}}}.dump());
    }
    w.Send(BatchOf(texts));
    assignments.clear();
    for (const Json& m : w.ReadMessages()) {
      ASSERT_EQ(m["type"], "command") << m.dump();
      assignments.insert(m["assignmentId"].get<std::string>());
    }
    ASSERT_EQ(assignments.size(), kCapacity) << "round " << round;
  }
}

TEST_F(ServerWorkerBatch, ABadMessageFailsItsWholeFrameAndChangesNothing) {
  const std::vector<std::string> ids = SubmitMany(1);
  ASSERT_EQ(ids.size(), 1u);
  RawWorker w(server_->url(), worker_token_);
  ASSERT_EQ(w.Register("w-strict", 1, /*batching=*/true)["type"], "registered");
  int batch_frames = 0;
  const std::string assignment = ReadCommands(w, 1, &batch_frames).begin()->second;
  // A good result followed by a broken message: neither is applied.
  w.Send(Json{{"type", "batch"},
              {"messages",
               {{{"type", "command.result"}, {"assignmentId", assignment}, {"status", "success"}},
                {{"type", "command.progress"}, {"assignmentId", assignment}}}}});
  Json error = w.ReadFrame();
  EXPECT_EQ(error["type"], "error");
  EXPECT_EQ(error["code"], "VALIDATION");
  EXPECT_EQ(error["message"],
            "batch: field 'messages[1]': command.progress: field 'progress': required");
  // A register cannot hide in a batch either.
  w.Send(Json{{"type", "batch"},
              {"messages",
               {{{"type", "register"},
                 {"workerId", "x"},
                 {"capacity", 1},
                 {"commands", {"bench.work"}}}}}});
  EXPECT_EQ(w.ReadFrame()["message"],
            "batch: field 'messages[0]': a 'register' cannot be part of a batch");
  EXPECT_EQ(Execution(ids[0])["status"], "running");
  // The assignment is still this worker's: its result is taken.
  w.Send(Json{{"type", "command.result"},
              {"assignmentId", assignment},
              {"status", "success"},
              {"output", {{"got", "late"}}}});
  EXPECT_EQ(testing::WaitForExecutionStatus(server_->Admin(), ids[0], "completed")["output"]["got"],
            "late");
}

// Regression: `registered` went out in one batch with the commands resent to a worker
// that came back, and the worker refused the frame whole ("a 'registered' cannot be part
// of a batch"), so it never registered. The answer to a registration is always a frame of
// its own, however many messages follow it at once.
TEST_F(ServerWorkerBatch, RegisteredIsAlwaysAFrameOfItsOwn) {
  const std::vector<std::string> ids = SubmitMany(8);
  ASSERT_EQ(ids.size(), 8u);
  for (int round = 0; round < 6; ++round) {
    RawWorker w(server_->url(), worker_token_);
    // The same process coming back (same session): what it holds and never acked is
    // sent again right after its registration.
    w.Send(Json{{"type", "register"},
                {"workerId", "w-back"},
                {"capacity", 8},
                {"commands", {"bench.work"}},
                {"sessionId", "s-1"},
                {"batching", true}});
    Json first = w.ReadFrame();
    ASSERT_EQ(first["type"], "registered") << "round " << round << ": " << first.dump();
    int batch_frames = 0;
    EXPECT_EQ(ReadCommands(w, ids.size(), &batch_frames).size(), ids.size());
  }
}

TEST_F(ServerWorkerBatch, AWorkerThatDoesNotSayBatchingNeverGetsABatch) {
  const std::vector<std::string> ids = SubmitMany(30);
  ASSERT_EQ(ids.size(), 30u);
  RawWorker w(server_->url(), worker_token_);
  Json registered = w.Register("w-plain", 30, /*batching=*/false);
  ASSERT_EQ(registered["type"], "registered");
  int batch_frames = 0;
  std::map<std::string, std::string> commands = ReadCommands(w, ids.size(), &batch_frames);
  EXPECT_EQ(commands.size(), ids.size());
  EXPECT_EQ(batch_frames, 0);
  for (const auto& [execution, assignment] : commands) {
    w.Send(Json{{"type", "command.result"},
                {"assignmentId", assignment},
                {"status", "success"},
                {"output", {{"got", execution}}}});
  }
  for (const std::string& id : ids) {
    EXPECT_EQ(testing::WaitForExecutionStatus(server_->Admin(), id, "completed")["output"]["got"],
              id);
  }
}

// A worker that stops reading is cut off once `--worker-queue` messages wait for it (after
// the kernel's socket buffers are full), and its work goes to a worker that reads.
TEST(ServerWorkerQueue, AWorkerThatStopsReadingIsDisconnectedAndItsWorkMoves) {
  const std::string dir = MakeTempDir();
  ServerProcess server(
      dir, {"--worker-queue", "4", "--heartbeat-interval", "200ms", "--heartbeat-timeout", "3s"});
  ASSERT_TRUE(server.ok()) << server.log();
  auto r = server.Admin().Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
  ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  auto token =
      server.Admin().Call("POST", "/api/v1/tokens", {{"name", "workers"}, {"scopes", {"worker"}}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  const std::string worker_token = (*token)["token"];

  // 40 commands of 200 KB each: 8 MB, more than the socket buffers of a reader that
  // does not read can take (up to 4 MiB to send, 128 KiB to receive by default).
  constexpr int kN = 40;
  const std::string big(200'000, 'x');
  std::vector<std::string> ids;
  for (int i = 0; i < kN; ++i) {
    auto e = server.Admin().Call(
        "POST", "/api/v1/executions",
        {{"workflow", "job"}, {"input", {{"n", std::to_string(i) + ":" + big}}}});
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ids.push_back((*e)["id"]);
  }
  // All its commands go out at once, as it registers. It keeps sending heartbeats, so
  // only its reading is at fault: silent, it could lose its work to the heartbeat
  // timeout before its queue fills when the server is slow (as under TSan; a 3 ms timeout
  // shows it in a Debug build). The 3 s timeout leaves room for a busy engine thread.
  RawWorker stuck(server.url(), worker_token);
  ASSERT_EQ(stuck.Register("w-stuck", 100, /*batching=*/false)["type"], "registered");
  std::atomic<bool> stop_beating{false};
  std::thread beats([&] {
    const std::string beat = Json{
        {"type", "heartbeat"},
        {"currentLoad", 0},
        {"capacity", 100},
        {"status", "ONLINE"}}.dump();
    while (!stop_beating && stuck.TrySend(beat)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  const bool cut_off = testing::WaitUntil(
      [&] { return server.log().find("w-stuck reads too slowly") != std::string::npos; });
  stop_beating = true;
  beats.join();
  ASSERT_TRUE(cut_off) << server.log();
  // Its work moves once its heartbeat deadline has passed. The reader registers after
  // that, so the work goes to it at once: registered earlier, a reader that has nothing
  // to answer sends nothing, and under a slow server its own deadline could pass first.
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto workers = server.Admin().Call("GET", "/api/v1/workers");
    if (!workers.ok()) return false;
    for (const Json& w : (*workers)["workers"]) {
      if (w["workerId"] == "w-stuck") return w["status"] != "ONLINE";
    }
    return false;
  })) << server.log();

  RawWorker reader(server.url(), worker_token);
  // Capacity 2: at most two commands wait for it, within the bound of 4.
  ASSERT_EQ(reader.Register("w-reader", 2, /*batching=*/true)["type"], "registered");
  std::set<std::string> done;
  while (done.size() < ids.size()) {
    std::vector<std::string> answers;
    for (const Json& m : reader.ReadMessages()) {
      if (m["type"] != "command") continue;
      const std::string n = m["data"]["n"];
      answers.push_back(
          Json{{"type", "command.ack"}, {"assignmentId", m["assignmentId"]}, {"status", "accepted"}}
              .dump());
      answers.push_back(Json{{"type", "command.result"},
                             {"assignmentId", m["assignmentId"]},
                             {"status", "success"},
                             {"output", {{"got", n.substr(0, n.find(':'))}}}}
                            .dump());
      done.insert(m["execution"]["executionId"]);
    }
    if (!answers.empty()) reader.Send(BatchOf(answers));
  }
  for (int i = 0; i < kN; ++i) {
    Json e = testing::WaitForExecutionStatus(server.Admin(), ids[i], "completed");
    EXPECT_EQ(e["output"]["got"], std::to_string(i)) << e.dump();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
