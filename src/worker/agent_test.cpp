// The Agent against an in-memory server (fake_server.h), with /bin/sh handler scripts.
#include "worker/agent.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "worker/fake_server.h"
#include "worker/worker_test_util.h"

namespace baton::worker {
namespace {

using namespace std::chrono_literals;
using protocol::AckStatus;
using protocol::CommandAck;
using protocol::CommandProgress;
using protocol::CommandResult;
using protocol::Heartbeat;
using protocol::WorkerStatus;
using testing::FakeServer;
using testing::kWait;
using testing::MakeCommand;

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fifo_ = dir_.path() + "/go";
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    // Reports progress, then waits for the test (Release()) before its output.
    handlers_["gated"] = {dir_.Script("gated",
                                      "cat >/dev/null\necho '{\"progress\": 10}'\n"
                                      "read go < " +
                                          fifo_ + "\necho '{\"released\": true}'")};
    handlers_["echo"] = {dir_.Script("echo",
                                     "cat >/dev/null\necho '{\"progress\": 50}'\necho "
                                     "\"{\\\"id\\\": \\\"$BATON_ASSIGNMENT_ID\\\"}\"")};
    handlers_["quick"] = {dir_.Script("quick", "cat >/dev/null\necho '{\"done\": true}'")};
    handlers_["slow"] = {dir_.Script("slow", "cat >/dev/null\nexec sleep 600")};
  }

  void TearDown() override {
    if (!agent_) return;
    agent_->Stop();
    if (run_.valid()) {
      EXPECT_EQ(run_.wait_for(kWait), std::future_status::ready);
    }
  }

  AgentOptions Options(int capacity = 1) {
    AgentOptions o;
    o.worker_id = "w1";
    o.capacity = capacity;
    o.handlers.handlers = handlers_;
    o.handlers.builtin_shell = false;
    o.handlers.builtin_http = false;
    o.reconnect_initial = 1ms;
    o.reconnect_max = 4ms;
    o.log = log_.Sink();
    return o;
  }

  void Start(AgentOptions o) {
    agent_ = std::make_unique<Agent>(std::move(o));
    run_ = std::async(std::launch::async, [this] { return agent_->Run(server_.connector()); });
  }
  Status WaitRun() {
    if (run_.wait_for(kWait) != std::future_status::ready) {
      ADD_FAILURE() << "Run() did not return";
      return Status(errc::kTimeout, "Run() did not return");
    }
    return run_.get();
  }
  // Lets the gated handler(s) waiting on the fifo finish.
  void Release() { std::ofstream(fifo_) << "go\n"; }

  // Starts the agent, registers it on connection 0 and starts the gated command asg-1.
  void StartWithGatedCommand(int capacity = 1) {
    Start(Options(capacity));
    server_.Accept(0);
    EXPECT_EQ(Command(0, "gated", "asg-1", 0).status, AckStatus::kAccepted);
    server_.Wait<CommandProgress>(0);  // it runs
  }

  // Sends `command` on connection `conn` and waits for its ack (the n-th on it).
  CommandAck Command(size_t conn, const std::string& command, const std::string& id, size_t n) {
    server_.Push(conn, MakeCommand(command, nullptr, id));
    CommandAck ack = server_.Wait<CommandAck>(conn, n);
    EXPECT_EQ(ack.assignment_id, id);
    return ack;
  }

  testing::TempDir dir_;
  std::string fifo_;
  std::map<std::string, std::vector<std::string>> handlers_;
  FakeServer server_;
  testing::LogRecorder log_;
  std::unique_ptr<Agent> agent_;
  std::future<Status> run_;
};

TEST_F(AgentTest, RegistersThenHeartbeatsAtTheServersInterval) {
  AgentOptions o = Options(3);
  o.node_id = "node-7";
  o.host = "10.0.0.7";
  o.tags = {"gpu", "a100"};
  Start(o);
  protocol::Register r = server_.Wait<protocol::Register>(0);
  EXPECT_EQ(r.worker_id, "w1");
  EXPECT_EQ(r.node_id, "node-7");
  EXPECT_EQ(r.host, "10.0.0.7");
  EXPECT_EQ(r.capacity, 3);
  EXPECT_EQ(r.commands, (std::vector<std::string>{"echo", "gated", "quick", "slow"}));
  EXPECT_EQ(r.tags, (std::vector<std::string>{"gpu", "a100"}));
  EXPECT_TRUE(server_.All<Heartbeat>(0).empty());  // none before `registered`

  auto registered_at = std::chrono::steady_clock::now();
  server_.Push(0, protocol::Registered{"w1", 20, 40});
  Heartbeat third = server_.Wait<Heartbeat>(0, 2);
  // Each heartbeat comes a whole interval after the one before.
  EXPECT_GE(std::chrono::steady_clock::now() - registered_at, 60ms);
  EXPECT_EQ(third, (Heartbeat{0, 3, WorkerStatus::kOnline}));
  log_.WaitFor("registered as w1");
}

TEST_F(AgentTest, RunsACommandAndReportsProgressAndResult) {
  Start(Options());
  server_.Accept(0);
  EXPECT_EQ(Command(0, "echo", "asg-1", 0).status, AckStatus::kAccepted);
  CommandProgress p = server_.Wait<CommandProgress>(0);
  EXPECT_EQ(p.assignment_id, "asg-1");
  EXPECT_EQ(p.progress, 50);
  CommandResult r = server_.Wait<CommandResult>(0);
  EXPECT_EQ(r, CommandResult::Success("asg-1", {{"id", "asg-1"}}));
  // In order: ack, progress, result.
  std::vector<protocol::WorkerMessage> sent = server_.Sent(0);
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<CommandAck>(sent[1]));
  EXPECT_TRUE(std::holds_alternative<CommandProgress>(sent[2]));
  log_.WaitFor("started asg-1 echo");
  log_.WaitFor("finished asg-1 echo: success");
}

TEST_F(AgentTest, RejectsCommandsOverCapacity) {
  Start(Options(1));
  server_.Accept(0);
  EXPECT_EQ(Command(0, "gated", "asg-1", 0).status, AckStatus::kAccepted);
  EXPECT_EQ(Command(0, "echo", "asg-2", 1).status, AckStatus::kRejected);
  log_.WaitFor("rejected asg-2 echo: at capacity (1/1)");
  Release();
  EXPECT_EQ(server_.Wait<CommandResult>(0).assignment_id, "asg-1");
  // A free slot again.
  EXPECT_EQ(Command(0, "echo", "asg-3", 2).status, AckStatus::kAccepted);
  EXPECT_EQ(server_.Wait<CommandResult>(0, 1).assignment_id, "asg-3");
  EXPECT_EQ(server_.All<CommandResult>(0).size(), 2u);
}

// command.cancel, and STALE_ASSIGNMENT naming a running assignment: the handler is
// killed and no result is sent.
TEST_F(AgentTest, CancelKillsTheHandlerAndSendsNoResult) {
  const std::vector<protocol::ServerMessage> stops = {
      protocol::CommandCancel{"asg-1", "execution cancelled"},
      protocol::ProtocolError{"STALE_ASSIGNMENT", "reassigned", "asg-1"}};
  Start(Options());
  server_.Accept(0);
  for (size_t i = 0; i < stops.size(); ++i) {
    EXPECT_EQ(Command(0, "gated", "asg-1", 2 * i).status, AckStatus::kAccepted);
    server_.Wait<CommandProgress>(0, 2 * i);  // the handler runs (asg-2 sends one too)
    server_.Push(0, stops[i]);
    // It never gets past the fifo on its own.
    log_.WaitFor("finished asg-1 gated: cancelled (no result sent)", i + 1);
    // Messages go out in order: a result would have come before this ack.
    EXPECT_EQ(Command(0, "echo", "asg-2", 2 * i + 1).status, AckStatus::kAccepted);
    server_.Wait<CommandResult>(0, i);
    for (const CommandResult& r : server_.All<CommandResult>(0))
      EXPECT_EQ(r.assignment_id, "asg-2");
  }
  log_.WaitFor("cancelling asg-1: cancelled by the server: execution cancelled");
  log_.WaitFor("cancelling asg-1: the server no longer wants it (reassigned)");
  // Other errors are logged.
  server_.Push(0, protocol::ProtocolError{"BAD_MESSAGE", "what?", ""});
  log_.WaitFor("server error BAD_MESSAGE: what?");
}

TEST_F(AgentTest, AResultFinishedWhileDisconnectedIsSentAfterTheNextRegistration) {
  StartWithGatedCommand();
  server_.Drop(0);
  server_.Wait<protocol::Register>(1);  // reconnected; not registered yet
  Release();
  log_.WaitFor("finished asg-1 gated: success");
  EXPECT_TRUE(server_.All<CommandResult>(1).empty());  // held until `registered`
  server_.Accept(1);
  CommandResult r = server_.Wait<CommandResult>(1);
  EXPECT_EQ(r, CommandResult::Success("asg-1", {{"released", true}}));
  EXPECT_TRUE(server_.All<CommandResult>(0).empty());
  log_.WaitFor("reconnecting in");
}

TEST_F(AgentTest, FailedConnectsAreRetriedWithBackoff) {
  server_.FailConnects(3);
  Start(Options());
  server_.Accept(0);
  EXPECT_EQ(server_.connects(), 4);
  EXPECT_EQ(log_.CountOf("reconnecting in"), 3u);
  EXPECT_EQ(log_.CountOf("connection refused (test)"), 3u);
}

TEST_F(AgentTest, UnauthorizedEndsRunWithoutRetrying) {
  server_.Refuse(Status(kUnauthorized, "the server refused the worker connection (HTTP 401)"));
  Start(Options());
  Status s = WaitRun();
  EXPECT_EQ(s.code(), kUnauthorized);
  EXPECT_EQ(server_.connects(), 1);
  EXPECT_EQ(log_.CountOf("reconnecting"), 0u);
}

TEST_F(AgentTest, DrainFinishesRunningWorkThenDeregisters) {
  StartWithGatedCommand(2);
  agent_->Drain();
  EXPECT_EQ(server_.Wait<Heartbeat>(0), (Heartbeat{1, 2, WorkerStatus::kDraining}));
  EXPECT_EQ(Command(0, "echo", "asg-2", 1).status, AckStatus::kRejected);
  log_.WaitFor("rejected asg-2 echo: draining");
  EXPECT_TRUE(server_.All<protocol::Deregister>(0).empty());  // asg-1 still runs
  Release();
  EXPECT_TRUE(WaitRun().ok());
  std::vector<protocol::WorkerMessage> sent = server_.Sent(0);
  ASSERT_GE(sent.size(), 2u);
  EXPECT_EQ(std::get<CommandResult>(sent[sent.size() - 2]).assignment_id, "asg-1");
  EXPECT_TRUE(std::holds_alternative<protocol::Deregister>(sent.back()));
  EXPECT_TRUE(server_.WaitClosed(0));
  log_.WaitFor("drain started");
  log_.WaitFor("drain finished: deregistered");
}

TEST_F(AgentTest, DrainWithoutAConnectionAndNothingToSendReturns) {
  server_.FailConnects(1 << 30);
  Start(Options());
  log_.WaitFor("reconnecting in", 2);
  agent_->Drain();
  EXPECT_TRUE(WaitRun().ok());
  log_.WaitFor("drain finished: nothing left to send");
}

TEST_F(AgentTest, StopCancelsRunningWork) {
  StartWithGatedCommand();
  agent_->Stop();
  EXPECT_TRUE(WaitRun().ok());
  log_.WaitFor("finished asg-1 gated: cancelled");
  EXPECT_TRUE(server_.All<CommandResult>(0).empty());
  EXPECT_TRUE(server_.All<protocol::Deregister>(0).empty());
  EXPECT_TRUE(server_.WaitClosed(0));
}

// What a worker sent after `register`, as "ack:ID" / "result:ID" / "progress:ID".
std::vector<std::string> Answers(const std::vector<protocol::WorkerMessage>& sent) {
  std::vector<std::string> out;
  for (const auto& m : sent) {
    if (const auto* a = std::get_if<CommandAck>(&m)) out.push_back("ack:" + a->assignment_id);
    if (const auto* r = std::get_if<CommandResult>(&m)) out.push_back("result:" + r->assignment_id);
    if (const auto* p = std::get_if<CommandProgress>(&m)) {
      out.push_back("progress:" + p->assignment_id);
    }
  }
  return out;
}

TEST_F(AgentTest, BusyWorkerSendsItsAnswersTogetherAndAResultStandsForItsAck) {
  AgentOptions o = Options(2);
  o.batch_window = std::chrono::minutes(10);  // ended by the commands, never by time here
  Start(o);
  server_.Accept(0, 600000, /*batching=*/true);
  server_.PushAll(0,
                  {MakeCommand("quick", nullptr, "asg-1"), MakeCommand("quick", nullptr, "asg-2")});
  server_.Wait<CommandResult>(0, 1);
  // Two commands running: nothing left before one of them answered. Its result went in
  // place of its ack, with the other's ack (or its result, if it had answered too) in the
  // same frame.
  const std::vector<size_t> frames = server_.Frames(0);
  ASSERT_GE(frames.size(), 2u);  // register, then the answers
  EXPECT_EQ(frames[1], 2u);
  const std::vector<std::string> answers = Answers(server_.Sent(0));
  ASSERT_FALSE(answers.empty());
  EXPECT_TRUE(answers[0].starts_with("result:") || answers[1].starts_with("result:"))
      << ::testing::PrintToString(answers);
  EXPECT_LE(server_.All<CommandAck>(0).size(), 1u) << ::testing::PrintToString(answers);
  for (const std::string id : {"asg-1", "asg-2"}) {
    const auto result = std::find(answers.begin(), answers.end(), "result:" + id);
    EXPECT_NE(result, answers.end()) << id;
    EXPECT_EQ(std::find(result, answers.end(), "ack:" + id), answers.end())
        << "an ack after its own result: " << ::testing::PrintToString(answers);
  }
}

TEST_F(AgentTest, IdleWorkerSendsEachAnswerAtOnceWhateverTheBatchWindow) {
  AgentOptions o = Options(2);
  o.batch_window = std::chrono::minutes(10);  // longer than any wait below
  Start(o);
  server_.Accept(0, 600000, /*batching=*/true);
  // One command running: its ack and progress leave without waiting for a batch.
  EXPECT_EQ(Command(0, "gated", "asg-1", 0).status, AckStatus::kAccepted);
  server_.Wait<CommandProgress>(0);
  Release();
  EXPECT_EQ(server_.Wait<CommandResult>(0).assignment_id, "asg-1");
  EXPECT_EQ(Answers(server_.Sent(0)),
            (std::vector<std::string>{"ack:asg-1", "progress:asg-1", "result:asg-1"}));
}

TEST_F(AgentTest, TheBatchWindowBoundsTheWaitWhileCommandsKeepRunning) {
  AgentOptions o = Options(3);
  o.batch_window = std::chrono::seconds(2);
  Start(o);
  server_.Accept(0, 600000, /*batching=*/true);
  server_.PushAll(0, {MakeCommand("slow", nullptr, "asg-1"), MakeCommand("slow", nullptr, "asg-2"),
                      MakeCommand("quick", nullptr, "asg-3")});
  // Two commands never end: the window, not the commands, sends what is waiting.
  EXPECT_EQ(server_.Wait<CommandResult>(0).assignment_id, "asg-3");
  server_.Wait<CommandAck>(0, 1);
  const std::vector<std::string> answers = Answers(server_.Sent(0));
  EXPECT_NE(std::find(answers.begin(), answers.end(), "ack:asg-1"), answers.end());
  EXPECT_NE(std::find(answers.begin(), answers.end(), "ack:asg-2"), answers.end());
  EXPECT_EQ(std::find(answers.begin(), answers.end(), "ack:asg-3"), answers.end())
      << "the quick command answered within the window: its result stands for its ack; "
      << ::testing::PrintToString(answers);
}

TEST_F(AgentTest, WithoutBatchFramesEveryAckIsSent) {
  AgentOptions o = Options(2);
  o.batch_window = std::chrono::minutes(10);
  Start(o);
  server_.Accept(0);  // a server that reads one message per frame
  server_.PushAll(0,
                  {MakeCommand("quick", nullptr, "asg-1"), MakeCommand("quick", nullptr, "asg-2")});
  server_.Wait<CommandResult>(0, 1);
  EXPECT_EQ(server_.All<CommandAck>(0).size(), 2u);
  for (size_t n : server_.Frames(0)) EXPECT_EQ(n, 1u);
}

TEST_F(AgentTest, InvalidOptionsAreRefusedBeforeConnecting) {
  AgentOptions o = Options();
  o.worker_id = "no spaces";
  Start(o);
  EXPECT_EQ(WaitRun().code(), errc::kInvalidArgument);
  EXPECT_EQ(server_.connects(), 0);
}

}  // namespace
}  // namespace baton::worker
