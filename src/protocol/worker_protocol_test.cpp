// Round trips of every message, the examples of docs/worker-protocol.md, and defaults.
#include "protocol/worker_protocol.h"

#include <gtest/gtest.h>

#include <string>

#include "protocol/protocol_test_util.h"

namespace baton::protocol {
namespace {

using testing::ParseAs;
using testing::VariantOf;

// ToJson gives `expected`, which parses back to `m`, also through the text form.
template <class M>
void ExpectRoundTrip(const M& m, const char* expected) {
  using V = VariantOf<M>;
  EXPECT_EQ(ToJson(m), Json::parse(expected));
  EXPECT_EQ(ToJson(V(m)), Json::parse(expected));
  EXPECT_EQ(TypeOf(V(m)), std::string(M::kType));
  EXPECT_EQ(ParseAs<M>(ToJson(m)), m);
  Result<V> text = testing::ParseText<V>(ToText(V(m)));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(std::get<M>(*text), m);
}

TEST(WorkerProtocol, RegisterRoundTrip) {
  Register m;
  m.worker_id = "gpu-1";
  m.node_id = "gpu-node-01";
  m.host = "10.0.0.7";
  m.capacity = 4;
  m.commands = {"model.download", "model.deploy"};
  m.tags = {"gpu", "a100"};
  ExpectRoundTrip(m, R"({"type": "register", "workerId": "gpu-1", "nodeId": "gpu-node-01",
      "host": "10.0.0.7", "capacity": 4, "commands": ["model.download", "model.deploy"],
      "tags": ["gpu", "a100"]})");
}

TEST(WorkerProtocol, RegisterDefaults) {
  Register m = ParseAs<Register>(Json::parse(
      R"({"type": "register", "workerId": "w_1.a-B", "capacity": 1, "commands": ["x"]})"));
  EXPECT_EQ(m.worker_id, "w_1.a-B");
  EXPECT_EQ(m.node_id, "w_1.a-B");  // default: the workerId
  EXPECT_EQ(m.host, "");
  EXPECT_EQ(m.capacity, 1);
  EXPECT_EQ(m.commands, std::vector<std::string>{"x"});
  EXPECT_TRUE(m.tags.empty());
  // Null optional fields are absent ones.
  EXPECT_EQ(ParseAs<Register>(Json::parse(
                R"({"type": "register", "workerId": "w_1.a-B", "capacity": 1, "commands": ["x"],
                    "nodeId": null, "host": null, "tags": null})")),
            m);
  // A node_id left empty is not written; the parser fills it in.
  Register no_node = m;
  no_node.node_id.clear();
  EXPECT_FALSE(ToJson(no_node).contains("nodeId"));
  EXPECT_EQ(ParseAs<Register>(ToJson(no_node)), m);
  // The limits are inclusive.
  Register big = ParseAs<Register>({{"type", "register"},
                                    {"workerId", std::string(100, 'w')},
                                    {"capacity", 10000},
                                    {"commands", {"x"}}});
  EXPECT_EQ(big.capacity, 10000);
}

TEST(WorkerProtocol, HeartbeatRoundTrip) {
  Heartbeat m;
  m.current_load = 2;
  m.capacity = 4;
  ExpectRoundTrip(m,
                  R"({"type": "heartbeat", "currentLoad": 2, "capacity": 4, "status": "ONLINE"})");
  m.current_load = 0;
  m.status = WorkerStatus::kDraining;
  ExpectRoundTrip(
      m, R"({"type": "heartbeat", "currentLoad": 0, "capacity": 4, "status": "DRAINING"})");
}

TEST(WorkerProtocol, AckRoundTrip) {
  CommandAck m;
  m.assignment_id = "asg_1";
  m.estimated_duration = 120;
  ExpectRoundTrip(m, R"({"type": "command.ack", "assignmentId": "asg_1",
      "status": "accepted", "estimatedDuration": 120})");
  m.status = AckStatus::kRejected;
  m.estimated_duration.reset();
  ExpectRoundTrip(m, R"({"type": "command.ack", "assignmentId": "asg_1", "status": "rejected"})");
  m.estimated_duration = 0;
  EXPECT_EQ(ParseAs<CommandAck>(ToJson(m)).estimated_duration, 0);
}

TEST(WorkerProtocol, ProgressRoundTrip) {
  CommandProgress m;
  m.assignment_id = "asg_1";
  m.progress = 45;
  m.checkpoint = {{"bytes", 1048576}};
  m.data = {{"phase", "download"}};
  ExpectRoundTrip(m, R"({"type": "command.progress", "assignmentId": "asg_1",
      "progress": 45, "checkpoint": {"bytes": 1048576}, "data": {"phase": "download"}})");
  CommandProgress bare;
  bare.assignment_id = "asg_1";
  bare.progress = 100;
  ExpectRoundTrip(bare,
                  R"({"type": "command.progress", "assignmentId": "asg_1", "progress": 100})");
  // checkpoint and data may be any JSON.
  m.checkpoint = Json::array({1, "two", false});
  m.data = "text";
  EXPECT_EQ(ParseAs<CommandProgress>(ToJson(m)), m);
}

TEST(WorkerProtocol, ResultRoundTrip) {
  CommandResult ok = CommandResult::Success("asg_1", {{"path", "/models/x"}});
  ExpectRoundTrip(ok, R"({"type": "command.result", "assignmentId": "asg_1",
      "status": "success", "output": {"path": "/models/x"}})");
  ExpectRoundTrip(CommandResult::Success("asg_1", nullptr),
                  R"({"type": "command.result", "assignmentId": "asg_1", "status": "success"})");

  CommandResult failed = CommandResult::Failure(
      "asg_1", {"DOWNLOAD_FAILED", "HTTP 503 from hub", Json::object(), true});
  ExpectRoundTrip(failed, R"({"type": "command.result", "assignmentId": "asg_1",
      "status": "failure", "error": {"code": "DOWNLOAD_FAILED", "message": "HTTP 503 from hub",
      "details": {}, "retryable": true}})");
  failed.error.retryable = false;
  failed.error.details = {{"status", 503}};
  failed.output = "partial";
  ExpectRoundTrip(failed, R"({"type": "command.result", "assignmentId": "asg_1",
      "status": "failure", "output": "partial", "error": {"code": "DOWNLOAD_FAILED",
      "message": "HTTP 503 from hub", "details": {"status": 503}, "retryable": false}})");
}

TEST(WorkerProtocol, ResultErrorDefaults) {
  CommandResult r = ParseAs<CommandResult>(Json::parse(R"({"type": "command.result",
      "assignmentId": "a", "status": "failure", "error": {"code": "X"}})"));
  EXPECT_EQ(r.error.code, "X");
  EXPECT_EQ(r.error.message, "");
  EXPECT_EQ(r.error.details, Json::object());
  EXPECT_TRUE(r.error.retryable);
  // On success an error field is ignored, even a malformed one.
  r = ParseAs<CommandResult>(Json::parse(R"({"type": "command.result", "assignmentId": "a",
      "status": "success", "error": 5})"));
  EXPECT_EQ(r, CommandResult::Success("a", nullptr));
}

TEST(WorkerProtocol, DeregisterRoundTrip) {
  ExpectRoundTrip(Deregister{}, R"({"type": "deregister"})");
  // Unknown fields are ignored; it is not a message from the server.
  EXPECT_EQ(ParseAs<Deregister>(Json::parse(R"({"type": "deregister", "reason": "bye"})")),
            Deregister{});
  EXPECT_EQ(ParseServerMessageText(R"({"type": "deregister"})").status().message(),
            "message: field 'type': \"deregister\" is not a message from the server");
}

TEST(WorkerProtocol, RegisteredRoundTrip) {
  Registered m;
  m.worker_id = "gpu-1";
  m.heartbeat_interval_ms = 30000;
  m.heartbeat_timeout_ms = 60000;
  ExpectRoundTrip(m, R"({"type": "registered", "workerId": "gpu-1",
      "heartbeatInterval": 30000, "heartbeatTimeout": 60000})");
}

Command FullCommand() {
  Command m;
  m.message_id = "msg_1";
  m.assignment_id = "asg_1";
  m.command = "model.download";
  m.resource = "llama-3-8b";
  m.data = {{"url", "..."}};
  m.execution = {"01m7", "download", 2, 1};
  m.timeout_seconds = 600;
  m.metadata = {"01m7/download/1", "normal"};
  return m;
}

TEST(WorkerProtocol, CommandRoundTrip) {
  ExpectRoundTrip(FullCommand(), R"({"type": "command", "messageId": "msg_1",
      "assignmentId": "asg_1", "command": "model.download", "resource": "llama-3-8b",
      "data": {"url": "..."},
      "execution": {"executionId": "01m7", "stepId": "download", "stepIndex": 2, "attempt": 1},
      "checkpoint": null, "timeoutSeconds": 600,
      "metadata": {"correlationId": "01m7/download/1", "priority": "normal"}})");
  Command m = FullCommand();
  m.resource = {{"type", "model"}, {"id", "llama-3-8b"}};  // an object, as in workflow files
  m.checkpoint = {{"bytes", 10}};
  m.metadata.priority = "critical";
  EXPECT_EQ(ParseAs<Command>(ToJson(m)), m);
}

TEST(WorkerProtocol, CommandDefaults) {
  Command m = ParseAs<Command>(Json::parse(R"({"type": "command", "messageId": "m",
      "assignmentId": "a", "command": "c",
      "execution": {"executionId": "e", "stepId": "s", "stepIndex": 0, "attempt": 3}})"));
  EXPECT_TRUE(m.resource.is_null());
  EXPECT_TRUE(m.data.is_null());
  EXPECT_TRUE(m.checkpoint.is_null());
  EXPECT_EQ(m.timeout_seconds, 0);
  EXPECT_EQ(m.metadata.correlation_id, "");
  EXPECT_EQ(m.metadata.priority, "normal");
  EXPECT_EQ(m.execution.attempt, 3);
}

TEST(WorkerProtocol, CancelAndErrorRoundTrip) {
  ExpectRoundTrip(CommandCancel{"asg_1", "execution cancelled"},
                  R"({"type": "command.cancel", "assignmentId": "asg_1",
                            "reason": "execution cancelled"})");
  EXPECT_EQ(
      ParseAs<CommandCancel>(Json::parse(R"({"type": "command.cancel", "assignmentId": "asg_1"})")),
      (CommandCancel{"asg_1", ""}));
  ExpectRoundTrip(ProtocolError{"STALE_ASSIGNMENT", "reassigned", "asg_1"},
                  R"({"type": "error", "code": "STALE_ASSIGNMENT",
                            "message": "reassigned", "assignmentId": "asg_1"})");
  ExpectRoundTrip(ProtocolError{"BAD_MESSAGE", "", ""},
                  R"({"type": "error", "code": "BAD_MESSAGE", "message": ""})");
}

TEST(WorkerProtocol, UnknownFieldsAreIgnored) {
  Json j = ToJson(FullCommand());
  j["future"] = {{"x", 1}};
  j["execution"]["shard"] = 7;
  j["metadata"]["deadline"] = "soon";
  EXPECT_EQ(ParseAs<Command>(j), FullCommand());
  Json hb = Json::parse(R"({"type": "heartbeat", "currentLoad": 1, "capacity": 2,
      "status": "ONLINE", "gpuTemp": 71})");
  EXPECT_EQ(ParseAs<Heartbeat>(hb).current_load, 1);
}

// The examples of docs/worker-protocol.md, verbatim.
TEST(WorkerProtocol, DocumentExamplesParse) {
  for (
      const char* text : {
          R"({"type": "register", "workerId": "gpu-1", "nodeId": "gpu-node-01", "host": "10.0.0.7",
 "capacity": 4, "commands": ["model.download", "model.deploy"], "tags": ["gpu", "a100"]})",
          R"({"type": "heartbeat", "currentLoad": 2, "capacity": 4, "status": "ONLINE"})",
          R"({"type": "command.ack", "assignmentId": "asg_...", "status": "accepted", "estimatedDuration": 120})",
          R"({"type": "command.progress", "assignmentId": "asg_...", "progress": 45,
 "checkpoint": {"bytes": 1048576}, "data": {"phase": "download"}})",
          R"({"type": "command.result", "assignmentId": "asg_...", "status": "success", "output": {"path": "/models/x"}})",
          R"({"type": "command.result", "assignmentId": "asg_...", "status": "failure",
 "error": {"code": "DOWNLOAD_FAILED", "message": "HTTP 503 from hub", "details": {}, "retryable": true}})",
          R"({"type": "deregister"})",
      }) {
    Result<WorkerMessage> r = ParseWorkerMessageText(text);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << text;
  }
  for (
      const char* text : {
          R"({"type": "registered", "workerId": "gpu-1", "heartbeatInterval": 30000, "heartbeatTimeout": 60000})",
          R"({"type": "command", "messageId": "msg_...", "assignmentId": "asg_...",
 "command": "model.download", "resource": "llama-3-8b", "data": {"url": "..."},
 "execution": {"executionId": "01m7...", "stepId": "download", "stepIndex": 2, "attempt": 1},
 "checkpoint": null, "timeoutSeconds": 600,
 "metadata": {"correlationId": "01m7.../download/1", "priority": "normal"}})",
          R"({"type": "command.cancel", "assignmentId": "asg_...", "reason": "execution cancelled"})",
          R"({"type": "error", "code": "STALE_ASSIGNMENT", "message": "...", "assignmentId": "asg_..."})",
      }) {
    Result<ServerMessage> r = ParseServerMessageText(text);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << text;
  }
}

TEST(WorkerProtocol, ToTextReplacesInvalidUtf8) {
  CommandResult r = CommandResult::Success("a", "bad \xff byte");
  std::string text;
  ASSERT_NO_THROW(text = ToText(WorkerMessage(r)));
  Result<WorkerMessage> back = ParseWorkerMessageText(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<CommandResult>(*back).output, "bad \xEF\xBF\xBD byte");
}

TEST(WorkerProtocol, WorkerIdCharset) {
  EXPECT_TRUE(IsValidWorkerId("gpu-1"));
  EXPECT_TRUE(IsValidWorkerId("A.b_C-9"));
  EXPECT_TRUE(IsValidWorkerId(std::string(100, 'x')));
  EXPECT_FALSE(IsValidWorkerId(""));
  EXPECT_FALSE(IsValidWorkerId(std::string(101, 'x')));
  for (const char* bad : {"a b", "a/b", "a:b", "ü", "a\nb", "a@b", "a+b"}) {
    EXPECT_FALSE(IsValidWorkerId(bad)) << bad;
  }
}

}  // namespace
}  // namespace baton::protocol
