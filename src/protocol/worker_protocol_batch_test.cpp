// `batch` frames: several messages in one WebSocket frame, and the `batching` flags of
// register / registered that allow them.
#include "protocol/worker_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::protocol {
namespace {

std::string Error(const Status& s) {
  return s.message();
}

TEST(WorkerProtocolBatch, BatchingFlagsRoundTripAndDefaultToFalse) {
  Register reg;
  reg.worker_id = "w1";
  reg.commands = {"x"};
  EXPECT_FALSE(ToJson(reg).contains("batching"));
  reg.batching = true;
  EXPECT_EQ(ToJson(reg)["batching"], true);
  auto back = ParseWorkerMessage(ToJson(reg));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(std::get<Register>(*back).batching);

  Registered ok;
  ok.worker_id = "w1";
  EXPECT_FALSE(ToJson(ok).contains("batching"));
  auto plain = ParseServerMessage(ToJson(ok));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(std::get<Registered>(*plain).batching);
  ok.batching = true;
  auto batching = ParseServerMessage(ToJson(ok));
  ASSERT_TRUE(batching.ok());
  EXPECT_TRUE(std::get<Registered>(*batching).batching);

  auto wrong = ParseWorkerMessageText(
      R"({"type":"register","workerId":"w","capacity":1,"commands":["x"],"batching":"yes"})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(Error(wrong.status()).find("batching"), std::string::npos) << Error(wrong.status());
}

TEST(WorkerProtocolBatch, AFrameOfOneMessageIsThatMessage) {
  auto one =
      ParseWorkerFrameText(R"({"type":"command.ack","assignmentId":"a","status":"accepted"})");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(std::get<CommandAck>(one->front()).assignment_id, "a");
  auto bad = ParseWorkerFrameText(R"({"type":"command.ack","assignmentId":"a"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(Error(bad.status()), "command.ack: field 'status': required");
}

TEST(WorkerProtocolBatch, BatchTextJoinsMessagesThatParseBackInOrder) {
  std::vector<std::string> texts = {
      ToText(WorkerMessage(CommandAck{"a1", AckStatus::kAccepted, std::nullopt})),
      ToText(WorkerMessage(CommandResult::Success("a1", Json{{"n", 1}}))),
      ToText(WorkerMessage(CommandResult::Failure("a2", {"E", "no", Json::object(), false}))),
  };
  const std::string frame = BatchText(texts);
  EXPECT_EQ(Json::parse(frame)["type"], "batch");
  auto parsed = ParseWorkerFrameText(frame);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ(std::get<CommandAck>((*parsed)[0]).assignment_id, "a1");
  EXPECT_EQ(std::get<CommandResult>((*parsed)[1]).output, (Json{{"n", 1}}));
  EXPECT_FALSE(std::get<CommandResult>((*parsed)[2]).error.retryable);
  // One text is sent as it is, not wrapped.
  EXPECT_EQ(BatchText({texts[0]}), texts[0]);

  Command c;
  c.message_id = "m";
  c.assignment_id = "a";
  c.command = "x";
  c.execution = {"e", "s", 0, 1};
  auto server = ParseServerFrameText(
      BatchText({ToText(ServerMessage(c)), ToText(ServerMessage(CommandCancel{"b", "why"}))}));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_EQ(server->size(), 2u);
  EXPECT_EQ(std::get<Command>((*server)[0]), c);
  EXPECT_EQ(std::get<CommandCancel>((*server)[1]).reason, "why");
}

TEST(WorkerProtocolBatch, ABadMessageFailsTheWholeFrameNamingItsIndex) {
  struct Case {
    const char* frame;
    const char* error;
  };
  const Case cases[] = {
      {R"({"type":"batch"})", "batch: field 'messages': required"},
      {R"({"type":"batch","messages":[]})",
       "batch: field 'messages': expected an array of 1..1000 messages, got 0"},
      {R"({"type":"batch","messages":{}})",
       "batch: field 'messages': expected an array of 1..1000 messages, got {}"},
      {R"({"type":"batch","messages":[{"type":"deregister"},{"type":"command.ack","assignmentId":"a"}]})",
       "batch: field 'messages[1]': command.ack: field 'status': required"},
      {R"({"type":"batch","messages":[{"type":"batch","messages":[{"type":"deregister"}]}]})",
       "batch: field 'messages[0]': a 'batch' cannot be part of a batch"},
      {R"({"type":"batch","messages":[{"type":"register","workerId":"w","capacity":1,"commands":["x"]}]})",
       "batch: field 'messages[0]': a 'register' cannot be part of a batch"},
      {R"({"type":"batch","messages":[3]})",
       "batch: field 'messages[0]': message: expected a JSON object, got 3"},
      {R"({"type":"batch","messages":[{"type":"command","messageId":"m"}]})",
       "batch: field 'messages[0]': message: field 'type': \"command\" is not a message from a "
       "worker"},
  };
  for (const Case& c : cases) {
    auto got = ParseWorkerFrameText(c.frame);
    ASSERT_FALSE(got.ok()) << c.frame;
    EXPECT_EQ(got.status().code(), errc::kValidation) << c.frame;
    EXPECT_EQ(Error(got.status()), c.error) << c.frame;
  }
  std::string many = R"({"type":"batch","messages":[)";
  for (size_t i = 0; i <= kMaxBatch; ++i)
    many += std::string(i ? "," : "") + R"({"type":"deregister"})";
  many += "]}";
  auto too_many = ParseWorkerFrameText(many);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(Error(too_many.status()),
            "batch: field 'messages': expected an array of 1..1000 messages, got 1001");
  auto registered = ParseServerFrameText(
      R"({"type":"batch","messages":[{"type":"registered","workerId":"w","heartbeatInterval":1,"heartbeatTimeout":1}]})");
  ASSERT_FALSE(registered.ok());
  EXPECT_EQ(Error(registered.status()),
            "batch: field 'messages[0]': a 'registered' cannot be part of a batch");
}

// Frames stay within the count and byte limits, keep the order, and a message too large
// to share a frame goes alone as itself.
TEST(WorkerProtocolBatch, BatchFramesKeepOrderAndTheLimits) {
  auto ack = [](int i) {
    return ToText(WorkerMessage(CommandAck{"a" + std::to_string(i), AckStatus::kAccepted, {}}));
  };
  std::vector<std::string> many;
  for (int i = 0; i < 2500; ++i) many.push_back(ack(i));
  std::vector<Frame> frames = BatchFrames(many);
  ASSERT_EQ(frames.size(), 3u);  // 1000 + 1000 + 500
  std::vector<std::string> back;
  for (const Frame& f : frames) {
    auto parsed = ParseWorkerFrameText(f.text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->size(), f.messages);
    for (const WorkerMessage& m : *parsed) back.push_back(ToText(m));
  }
  EXPECT_EQ(back, many);

  const std::string big =
      ToText(WorkerMessage(CommandResult::Success("big", Json(std::string(300 << 10, 'x')))));
  const std::string huge =
      ToText(WorkerMessage(CommandResult::Success("huge", Json(std::string(600 << 10, 'y')))));
  frames = BatchFrames({ack(1), big, big, ack(2), huge, ack(3)});
  std::vector<size_t> counts;
  for (const Frame& f : frames) {
    EXPECT_TRUE(f.text.size() <= kMaxBatchBytes || f.messages == 1) << f.text.size();
    counts.push_back(f.messages);
  }
  // [ack, big] [big, ack] [huge, alone] [ack]
  EXPECT_EQ(counts, (std::vector<size_t>{2, 2, 1, 1}));
  EXPECT_EQ(frames[2].text, huge);  // as itself, not wrapped
  EXPECT_EQ(frames[3].text, ack(3));
  EXPECT_TRUE(BatchFrames({}).empty());
}

// Commands are written as text directly (not through a Json): the text is exactly what
// ToJson writes, for plain, escaped, non-ASCII and invalid UTF-8 strings alike.
TEST(WorkerProtocolText, ACommandsTextIsItsJson) {
  Command c;
  c.message_id = "msg_01/a/1";
  c.assignment_id = "01/a/1";
  c.command = "model.download";
  c.execution = {"01", "a", 3, 2};
  EXPECT_EQ(Json::parse(ToText(ServerMessage(c))), ToJson(c));
  c.command = "quote \" backslash \\ tab \t nl \n";
  c.resource = Json{{"model", "llama"}, {"n", 3}};
  c.data = Json::array({1, "two", nullptr, Json::object()});
  c.checkpoint = Json{{"bytes", 1048576}};
  c.timeout_seconds = 600;
  c.metadata = {"01/a/2", "high"};
  c.execution.step_id = "étape-ü";
  EXPECT_EQ(Json::parse(ToText(ServerMessage(c))), ToJson(c));
  c.execution.step_id = std::string("bad \xff utf8");
  const std::string text = ToText(ServerMessage(c));
  const Json parsed = Json::parse(text);
  EXPECT_EQ(parsed["execution"]["stepId"], "bad \xEF\xBF\xBD utf8");  // U+FFFD
  EXPECT_EQ(parsed, Json::parse(ToJson(c).dump(-1, ' ', false, Json::error_handler_t::replace)));
}

}  // namespace
}  // namespace baton::protocol
