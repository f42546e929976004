// Random and mutated input never crashes or throws, and whatever parses round-trips.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "protocol/protocol_test_util.h"
#include "protocol/worker_protocol.h"

namespace baton::protocol {
namespace {

const std::vector<std::string> kTypes = {
    "register", "heartbeat",      "command.ack", "command.progress", "command.result", "registered",
    "command",  "command.cancel", "error",       "deregister",       "other"};
const std::vector<std::string> kKeys = {"type",
                                        "workerId",
                                        "nodeId",
                                        "host",
                                        "capacity",
                                        "commands",
                                        "tags",
                                        "currentLoad",
                                        "status",
                                        "assignmentId",
                                        "estimatedDuration",
                                        "progress",
                                        "checkpoint",
                                        "data",
                                        "output",
                                        "error",
                                        "code",
                                        "message",
                                        "details",
                                        "retryable",
                                        "heartbeatInterval",
                                        "heartbeatTimeout",
                                        "messageId",
                                        "command",
                                        "resource",
                                        "execution",
                                        "executionId",
                                        "stepId",
                                        "stepIndex",
                                        "attempt",
                                        "timeoutSeconds",
                                        "metadata",
                                        "correlationId",
                                        "priority",
                                        "reason",
                                        "x"};
const std::vector<std::string> kStrings = {
    "",         "a",       "gpu-1",   "ONLINE", "DRAINING", "accepted",
    "rejected", "success", "failure", "a b",    "\xff",     std::string(120, 'w'),
    "normal"};

class Fuzzer {
 public:
  explicit Fuzzer(uint32_t seed) : rng_(seed) {}

  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  Json Scalar() {
    switch (Pick(9)) {
      case 0:
        return nullptr;
      case 1:
        return Pick(2) == 1;
      case 2:
        return static_cast<int64_t>(Pick(300)) - 100;
      case 3:
        return std::numeric_limits<int64_t>::min();
      case 4:
        return std::numeric_limits<uint64_t>::max();
      case 5:
        return std::uniform_real_distribution<double>(-1e20, 1e20)(rng_);
      case 6:
        return kTypes[Pick(kTypes.size())];
      case 7:
        return static_cast<double>(Pick(101));
      default:
        return kStrings[Pick(kStrings.size())];
    }
  }

  Json Value(int depth) {
    size_t kind = depth <= 0 ? 0 : Pick(4);
    if (kind <= 1) return Scalar();
    if (kind == 2) {
      Json a = Json::array();
      for (size_t i = Pick(4); i > 0; --i) a.push_back(Value(depth - 1));
      return a;
    }
    return Object(depth - 1);
  }

  Json Object(int depth) {
    Json o = Json::object();
    for (size_t i = Pick(8); i > 0; --i) o[kKeys[Pick(kKeys.size())]] = Value(depth);
    return o;
  }

  // A random message-shaped object: a known type and random fields.
  Json Message() {
    Json o = Object(3);
    if (Pick(10) > 0) o["type"] = kTypes[Pick(kTypes.size())];
    return o;
  }

  // A valid message with one field replaced, removed or nested garbage added.
  Json Mutate(Json j) {
    for (size_t n = 1 + Pick(3); n > 0; --n) {
      Json* target = &j;
      // Sometimes go one level down into a nested object.
      for (auto& [k, v] : j.items()) {
        if (v.is_object() && Pick(3) == 0) {
          target = &v;
          break;
        }
      }
      const std::string& key = kKeys[Pick(kKeys.size())];
      switch (Pick(3)) {
        case 0:
          target->erase(key);
          break;
        case 1:
          (*target)[key] = Scalar();
          break;
        default:
          (*target)[key] = Value(3);
          break;
      }
    }
    return j;
  }

  std::string Bytes() {
    std::string s;
    for (size_t i = Pick(64); i > 0; --i) s.push_back(static_cast<char>(Pick(256)));
    return s;
  }

  std::string FlipBytes(std::string s) {
    for (size_t n = 1 + Pick(4); n > 0 && !s.empty(); --n) {
      s[Pick(s.size())] = static_cast<char>(Pick(256));
    }
    return s;
  }

 private:
  std::mt19937 rng_;
};

// Parsing never throws; an accepted message writes itself back to an equal message (up to
// invalid UTF-8, which its text form replaces).
template <class V>
void CheckAs(const Json& j, int& accepted) {
  Result<V> r(Status(errc::kValidation, "unset"));
  ASSERT_NO_THROW(r = testing::Parse<V>(j));
  if (!r.ok()) {
    EXPECT_EQ(r.status().code(), errc::kValidation);
    EXPECT_FALSE(r.status().message().empty());
    return;
  }
  ++accepted;
  Result<V> again = testing::ParseText<V>(ToText(*r));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ToText(*again), ToText(*r));
}

void Check(const Json& j, int& accepted) {
  CheckAs<WorkerMessage>(j, accepted);
  CheckAs<ServerMessage>(j, accepted);
}

std::vector<Json> ValidMessages() {
  std::vector<Json> out;
  for (
      const char* text : {
          R"({"type": "register", "workerId": "gpu-1", "nodeId": "n", "host": "h",
               "capacity": 4, "commands": ["a", "b"], "tags": ["gpu"]})",
          R"({"type": "heartbeat", "currentLoad": 2, "capacity": 4, "status": "ONLINE"})",
          R"({"type": "command.ack", "assignmentId": "a", "status": "accepted", "estimatedDuration": 1})",
          R"({"type": "command.progress", "assignmentId": "a", "progress": 45,
               "checkpoint": {"b": 1}, "data": {"p": "x"}})",
          R"({"type": "command.result", "assignmentId": "a", "status": "failure",
               "error": {"code": "E", "message": "m", "details": {}, "retryable": true}})",
          R"({"type": "registered", "workerId": "w", "heartbeatInterval": 1, "heartbeatTimeout": 2})",
          R"({"type": "command", "messageId": "m", "assignmentId": "a", "command": "c",
               "resource": "r", "data": {"u": 1},
               "execution": {"executionId": "e", "stepId": "s", "stepIndex": 0, "attempt": 1},
               "checkpoint": null, "timeoutSeconds": 5,
               "metadata": {"correlationId": "c", "priority": "high"}})",
          R"({"type": "command.cancel", "assignmentId": "a", "reason": "r"})",
          R"({"type": "deregister"})",
          R"({"type": "error", "code": "STALE_ASSIGNMENT", "message": "m", "assignmentId": "a"})",
      }) {
    out.push_back(Json::parse(text));
  }
  return out;
}

TEST(WorkerProtocolFuzz, RandomObjectsNeverCrash) {
  Fuzzer f(12345);
  int accepted = 0;
  for (int i = 0; i < 10000; ++i) {
    Check(i % 4 == 0 ? f.Value(4) : f.Message(), accepted);
    if (::testing::Test::HasFatalFailure()) return;
  }
  printf("[ fuzz     ] %d random values accepted\n", accepted);
}

TEST(WorkerProtocolFuzz, MutatedValidMessagesNeverCrash) {
  Fuzzer f(777);
  const std::vector<Json> valid = ValidMessages();
  int accepted = 0;
  for (int i = 0; i < 10000; ++i) {
    Check(f.Mutate(valid[f.Pick(valid.size())]), accepted);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(accepted, 0);  // some mutations keep the message valid
  printf("[ fuzz     ] %d mutated messages accepted\n", accepted);
}

TEST(WorkerProtocolFuzz, RandomAndCorruptedTextNeverCrashes) {
  Fuzzer f(4242);
  std::vector<std::string> texts;
  for (const Json& j : ValidMessages()) texts.push_back(j.dump());
  for (int i = 0; i < 10000; ++i) {
    std::string text = i % 2 ? f.Bytes() : f.FlipBytes(texts[f.Pick(texts.size())]);
    ASSERT_NO_THROW({
      Result<WorkerMessage> w = ParseWorkerMessageText(text);
      Result<ServerMessage> s = ParseServerMessageText(text);
      EXPECT_TRUE(w.ok() || w.status().code() == errc::kValidation);
      EXPECT_TRUE(s.ok() || s.status().code() == errc::kValidation);
    });
  }
}

TEST(WorkerProtocolFuzz, DeepNestingIsRefusedWithoutRecursion) {
  // Far deeper than a recursive copy or comparison could survive.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  // Refused while parsing: the text never becomes a tree.
  EXPECT_NE(ParseWorkerMessageText(deep).status().message().find("nesting deeper than"),
            std::string::npos);
  std::string head = R"({"type": "command.progress", "assignmentId": "a", "progress": 1, "data": )";
  Result<WorkerMessage> r = ParseWorkerMessageText(head + deep + "}");
  EXPECT_NE(r.status().message().find("field 'data[0][0]"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("nesting deeper than"), std::string::npos);
  Json nested = Json::parse(R"({"type": "command.progress", "assignmentId": "a"})");
  nested["progress"] = Json::parse(deep);
  EXPECT_EQ(ParseWorkerMessage(nested).status().message(),
            "command.progress: field 'progress': expected an integer 0..100, got an array");

  // 128 levels are fine; 129 are not.
  auto levels = [](size_t n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_TRUE(ParseWorkerMessageText(head + levels(128) + "}").ok());
  EXPECT_FALSE(ParseWorkerMessageText(head + levels(129) + "}").ok());
  std::string result = R"({"type": "command.result", "assignmentId": "a", "status": "failure",
      "error": {"code": "E", "details": {"x": )" +
                       levels(128) + "}}}";
  EXPECT_EQ(ParseWorkerMessageText(result).status().message(),
            "command.result: field 'error.details': nested deeper than 128 levels");
}

}  // namespace
}  // namespace baton::protocol
