// Every validation error of the parsers, with its exact message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/protocol_test_util.h"
#include "protocol/worker_protocol.h"

namespace baton::protocol {
namespace {

struct Case {
  const char* json;
  const char* message;
};

// `base` with `patch` merged in (RFC 7386: null removes a field).
Json Patched(const char* base, const char* patch) {
  Json j = Json::parse(base);
  j.merge_patch(Json::parse(patch));
  return j;
}

// `base` parses as a V; each case patched into it fails with its message.
template <class V>
void ExpectErrors(const char* base, const std::vector<Case>& cases) {
  ASSERT_TRUE(testing::Parse<V>(Json::parse(base)).ok()) << base;
  for (const Case& c : cases) {
    Result<V> r = testing::Parse<V>(Patched(base, c.json));
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), errc::kValidation);
    EXPECT_EQ(r.status().message(), c.message) << c.json;
  }
}

TEST(WorkerProtocolValidation, Register) {
  ExpectErrors<WorkerMessage>(
      R"({"type": "register", "workerId": "gpu-1", "capacity": 4, "commands": ["a"]})",
      {
          {R"({"workerId": null})", "register: field 'workerId': required"},
          {R"({"workerId": ""})",
           "register: field 'workerId': expected 1 to 100 characters of [A-Za-z0-9._-], got \"\""},
          {R"({"workerId": "gpu 1"})",
           "register: field 'workerId': expected 1 to 100 characters of [A-Za-z0-9._-], got "
           "\"gpu 1\""},
          {R"({"workerId": 7})",
           "register: field 'workerId': expected 1 to 100 characters of [A-Za-z0-9._-], got 7"},
          {R"({"capacity": null})", "register: field 'capacity': required"},
          {R"({"capacity": 0})", "register: field 'capacity': expected an integer 1..10000, got 0"},
          {R"({"capacity": 10001})",
           "register: field 'capacity': expected an integer 1..10000, got 10001"},
          {R"({"capacity": -3})",
           "register: field 'capacity': expected an integer 1..10000, got -3"},
          {R"({"capacity": 2.5})",
           "register: field 'capacity': expected an integer 1..10000, got 2.5"},
          {R"({"capacity": 4.0})",
           "register: field 'capacity': expected an integer 1..10000, got 4.0"},
          {R"({"capacity": "4"})",
           "register: field 'capacity': expected an integer 1..10000, got \"4\""},
          {R"({"capacity": 18446744073709551615})",
           "register: field 'capacity': expected an integer 1..10000, got 18446744073709551615"},
          {R"({"commands": null})", "register: field 'commands': required"},
          {R"({"commands": []})",
           "register: field 'commands': expected a non-empty array of strings, got []"},
          {R"({"commands": "a"})",
           "register: field 'commands': expected a non-empty array of strings, got \"a\""},
          {R"({"commands": ["a", 3]})",
           "register: field 'commands[1]': expected a non-empty string, got 3"},
          {R"({"commands": ["a", ""]})",
           "register: field 'commands[1]': expected a non-empty string, got \"\""},
          {R"({"nodeId": ""})", "register: field 'nodeId': expected a non-empty string, got \"\""},
          {R"({"nodeId": ["n"]})",
           "register: field 'nodeId': expected a non-empty string, got an array"},
          {R"({"host": 10})", "register: field 'host': expected a string, got 10"},
          {R"({"tags": "gpu"})",
           "register: field 'tags': expected an array of strings, got \"gpu\""},
          {R"({"tags": ["gpu", {"a": 1}]})",
           "register: field 'tags[1]': expected a non-empty string, got an object"},
      });
  // A long value is cut in the message.
  Result<WorkerMessage> r = ParseWorkerMessage({{"type", "register"},
                                                {"workerId", std::string(101, 'w')},
                                                {"capacity", 1},
                                                {"commands", {"a"}}});
  EXPECT_EQ(r.status().message(),
            "register: field 'workerId': expected 1 to 100 characters of [A-Za-z0-9._-], got \"" +
                std::string(59, 'w') + "...");
}

TEST(WorkerProtocolValidation, Heartbeat) {
  ExpectErrors<WorkerMessage>(
      R"({"type": "heartbeat", "currentLoad": 2, "capacity": 4, "status": "ONLINE"})",
      {
          {R"({"currentLoad": null})", "heartbeat: field 'currentLoad': required"},
          {R"({"currentLoad": -1})",
           "heartbeat: field 'currentLoad': expected an integer 0..2147483647, got -1"},
          {R"({"currentLoad": true})",
           "heartbeat: field 'currentLoad': expected an integer 0..2147483647, got true"},
          {R"({"capacity": null})", "heartbeat: field 'capacity': required"},
          {R"({"capacity": 0})",
           "heartbeat: field 'capacity': expected an integer 1..10000, got 0"},
          {R"({"status": null})", "heartbeat: field 'status': required"},
          {R"({"status": "online"})",
           "heartbeat: field 'status': expected \"ONLINE\" or \"DRAINING\", got \"online\""},
          {R"({"status": 1})",
           "heartbeat: field 'status': expected \"ONLINE\" or \"DRAINING\", got 1"},
      });
}

TEST(WorkerProtocolValidation, Ack) {
  ExpectErrors<WorkerMessage>(
      R"({"type": "command.ack", "assignmentId": "a", "status": "accepted"})",
      {
          {R"({"assignmentId": null})", "command.ack: field 'assignmentId': required"},
          {R"({"assignmentId": ""})",
           "command.ack: field 'assignmentId': expected a non-empty string, got \"\""},
          {R"({"assignmentId": 12})",
           "command.ack: field 'assignmentId': expected a non-empty string, got 12"},
          {R"({"status": null})", "command.ack: field 'status': required"},
          {R"({"status": "ok"})",
           "command.ack: field 'status': expected \"accepted\" or \"rejected\", got "
           "\"ok\""},
          {R"({"estimatedDuration": -5})",
           "command.ack: field 'estimatedDuration': expected an integer >= 0, got -5"},
          {R"({"estimatedDuration": "2m"})",
           "command.ack: field 'estimatedDuration': expected an integer >= 0, got "
           "\"2m\""},
      });
}

TEST(WorkerProtocolValidation, Progress) {
  ExpectErrors<WorkerMessage>(
      R"({"type": "command.progress", "assignmentId": "a", "progress": 45})",
      {
          {R"({"assignmentId": null})", "command.progress: field 'assignmentId': required"},
          {R"({"progress": null})", "command.progress: field 'progress': required"},
          {R"({"progress": 140})",
           "command.progress: field 'progress': expected an integer 0..100, got 140"},
          {R"({"progress": -1})",
           "command.progress: field 'progress': expected an integer 0..100, got -1"},
          {R"({"progress": 45.5})",
           "command.progress: field 'progress': expected an integer 0..100, got 45.5"},
          {R"({"progress": "45"})",
           "command.progress: field 'progress': expected an integer 0..100, got \"45\""},
          {R"({"progress": [45]})",
           "command.progress: field 'progress': expected an integer 0..100, got an array"},
      });
}

TEST(WorkerProtocolValidation, Result) {
  const char* failure = R"({"type": "command.result", "assignmentId": "a", "status": "failure",
      "error": {"code": "E", "message": "m", "details": {}, "retryable": false}})";
  ExpectErrors<WorkerMessage>(
      failure,
      {
          {R"({"assignmentId": null})", "command.result: field 'assignmentId': required"},
          {R"({"status": null})", "command.result: field 'status': required"},
          {R"({"status": "failed"})",
           "command.result: field 'status': expected \"success\" or \"failure\", got \"failed\""},
          {R"({"error": null})", "command.result: field 'error': required"},
          {R"({"error": "boom"})",
           "command.result: field 'error': expected an object, got \"boom\""},
          {R"({"error": {"code": null}})", "command.result: field 'error.code': required"},
          {R"({"error": {"code": ""}})",
           "command.result: field 'error.code': expected a non-empty string, got \"\""},
          {R"({"error": {"message": 5}})",
           "command.result: field 'error.message': expected a string, got 5"},
          {R"({"error": {"details": [1]}})",
           "command.result: field 'error.details': expected an object, got an array"},
          {R"({"error": {"retryable": "no"}})",
           "command.result: field 'error.retryable': expected true or false, got \"no\""},
      });
}

TEST(WorkerProtocolValidation, Registered) {
  ExpectErrors<ServerMessage>(
      R"({"type": "registered", "workerId": "w", "heartbeatInterval": 30000, "heartbeatTimeout": 60000})",
      {
          {R"({"workerId": null})", "registered: field 'workerId': required"},
          {R"({"workerId": "w/1"})",
           "registered: field 'workerId': expected 1 to 100 characters of [A-Za-z0-9._-], got "
           "\"w/1\""},
          {R"({"heartbeatInterval": null})", "registered: field 'heartbeatInterval': required"},
          {R"({"heartbeatInterval": 0})",
           "registered: field 'heartbeatInterval': expected an integer >= 1, got 0"},
          {R"({"heartbeatTimeout": null})", "registered: field 'heartbeatTimeout': required"},
          {R"({"heartbeatTimeout": "60s"})",
           "registered: field 'heartbeatTimeout': expected an integer >= 1, got \"60s\""},
      });
}

TEST(WorkerProtocolValidation, Command) {
  ExpectErrors<ServerMessage>(
      R"({"type": "command", "messageId": "m", "assignmentId": "a", "command": "c",
          "execution": {"executionId": "e", "stepId": "s", "stepIndex": 0, "attempt": 1}})",
      {
          {R"({"messageId": null})", "command: field 'messageId': required"},
          {R"({"assignmentId": ""})",
           "command: field 'assignmentId': expected a non-empty string, got \"\""},
          {R"({"command": null})", "command: field 'command': required"},
          {R"({"command": false})",
           "command: field 'command': expected a non-empty string, got false"},
          {R"({"execution": null})", "command: field 'execution': required"},
          {R"({"execution": "e"})", "command: field 'execution': expected an object, got \"e\""},
          {R"({"execution": {"executionId": null}})",
           "command: field 'execution.executionId': required"},
          {R"({"execution": {"stepId": 3}})",
           "command: field 'execution.stepId': expected a non-empty string, got 3"},
          {R"({"execution": {"stepIndex": null}})",
           "command: field 'execution.stepIndex': required"},
          {R"({"execution": {"stepIndex": -1}})",
           "command: field 'execution.stepIndex': expected an integer 0..2147483647, got -1"},
          {R"({"execution": {"attempt": 0}})",
           "command: field 'execution.attempt': expected an integer 1..2147483647, got 0"},
          {R"({"execution": {"attempt": null}})", "command: field 'execution.attempt': required"},
          {R"({"timeoutSeconds": -1})",
           "command: field 'timeoutSeconds': expected an integer >= 0, got -1"},
          {R"({"timeoutSeconds": 1.5})",
           "command: field 'timeoutSeconds': expected an integer >= 0, got 1.5"},
          {R"({"metadata": []})", "command: field 'metadata': expected an object, got []"},
          {R"({"metadata": {"correlationId": 1}})",
           "command: field 'metadata.correlationId': expected a string, got 1"},
          {R"({"metadata": {"priority": {}}})",
           "command: field 'metadata.priority': expected a string, got {}"},
      });
}

TEST(WorkerProtocolValidation, CancelAndError) {
  ExpectErrors<ServerMessage>(
      R"({"type": "command.cancel", "assignmentId": "a"})",
      {
          {R"({"assignmentId": null})", "command.cancel: field 'assignmentId': required"},
          {R"({"reason": 1})", "command.cancel: field 'reason': expected a string, got 1"},
      });
  ExpectErrors<ServerMessage>(
      R"({"type": "error", "code": "STALE_ASSIGNMENT"})",
      {
          {R"({"code": null})", "error: field 'code': required"},
          {R"({"code": ""})", "error: field 'code': expected a non-empty string, got \"\""},
          {R"({"message": null, "assignmentId": 5})",
           "error: field 'assignmentId': expected a string, got 5"},
          {R"({"message": ["x"]})", "error: field 'message': expected a string, got an array"},
      });
}

TEST(WorkerProtocolValidation, TheFirstProblemIsReported) {
  Result<WorkerMessage> r = ParseWorkerMessage(
      Json::parse(R"({"type": "register", "workerId": "", "capacity": 0, "commands": []})"));
  EXPECT_EQ(r.status().message(),
            "register: field 'workerId': expected 1 to 100 characters of [A-Za-z0-9._-], got \"\"");
}

TEST(WorkerProtocolValidation, Envelope) {
  struct EnvelopeCase {
    const char* text;
    const char* worker_message;
    const char* server_message;
  };
  const std::vector<EnvelopeCase> cases = {
      {"[1, 2]", "message: expected a JSON object, got an array",
       "message: expected a JSON object, got an array"},
      {"\"register\"", "message: expected a JSON object, got \"register\"",
       "message: expected a JSON object, got \"register\""},
      {"null", "message: expected a JSON object, got null",
       "message: expected a JSON object, got null"},
      {"{}", "message: field 'type': required", "message: field 'type': required"},
      {R"({"type": 3})", "message: field 'type': expected a string, got 3",
       "message: field 'type': expected a string, got 3"},
      {R"({"type": "hello"})", "message: field 'type': unknown message type \"hello\"",
       "message: field 'type': unknown message type \"hello\""},
      {R"({"type": "command"})",
       "message: field 'type': \"command\" is not a message from a worker",
       "command: field 'messageId': required"},
      {R"({"type": "heartbeat"})", "heartbeat: field 'currentLoad': required",
       "message: field 'type': \"heartbeat\" is not a message from the server"},
  };
  for (const EnvelopeCase& c : cases) {
    Result<WorkerMessage> w = ParseWorkerMessageText(c.text);
    ASSERT_FALSE(w.ok()) << c.text;
    EXPECT_EQ(w.status().code(), errc::kValidation);
    EXPECT_EQ(w.status().message(), c.worker_message);
    Result<ServerMessage> s = ParseServerMessageText(c.text);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.status().message(), c.server_message);
  }
}

TEST(WorkerProtocolValidation, TextThatIsNotJson) {
  for (const char* text : {"", "{", "{\"type\": \"heartbeat\",}", "nul", "{} {}", "\xff"}) {
    Result<WorkerMessage> r = ParseWorkerMessageText(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), errc::kValidation);
    EXPECT_EQ(r.status().message().rfind("message: not valid JSON: ", 0), 0u)
        << r.status().message();
    EXPECT_EQ(r.status().message().find("[json.exception"), std::string::npos);
    EXPECT_FALSE(ParseServerMessageText(text).ok());
  }
  EXPECT_EQ(ParseWorkerMessageText("{").status().message(),
            "message: not valid JSON: syntax error while parsing object key - unexpected end "
            "of input; expected string literal (at byte 2)");
}

}  // namespace
}  // namespace baton::protocol
