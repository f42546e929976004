// Messages from JSON, checked field by field (the rules: worker_protocol.h).
#include <exception>
#include <utility>

#include "common/json_parse.h"
#include "protocol/field_reader.h"
#include "protocol/worker_protocol.h"

namespace baton::protocol {
namespace {

Register ReadRegister(FieldReader& r) {
  Register m;
  m.worker_id = r.WorkerId("workerId");
  m.capacity = static_cast<int>(r.Integer("capacity", 1, kMaxCapacity));
  m.commands = r.StringList("commands", /*required=*/true);
  m.node_id = r.OptionalNonEmptyString("nodeId").value_or(m.worker_id);
  m.host = r.OptionalString("host", "");
  m.tags = r.StringList("tags", /*required=*/false);
  m.session_id = r.OptionalString("sessionId", "");
  if (m.session_id.size() > 128) r.Fail("sessionId", "longer than 128 characters");
  m.batching = r.OptionalBool("batching", false);
  return m;
}

Heartbeat ReadHeartbeat(FieldReader& r) {
  Heartbeat m;
  m.current_load = static_cast<int>(r.Integer("currentLoad", 0, std::numeric_limits<int>::max()));
  m.capacity = static_cast<int>(r.Integer("capacity", 1, kMaxCapacity));
  m.status = static_cast<WorkerStatus>(r.Enum("status", {"ONLINE", "DRAINING"}));
  return m;
}

CommandAck ReadAck(FieldReader& r) {
  CommandAck m;
  m.assignment_id = r.NonEmptyString("assignmentId");
  m.status = static_cast<AckStatus>(r.Enum("status", {"accepted", "rejected"}));
  m.estimated_duration = r.OptionalInteger("estimatedDuration", 0);
  return m;
}

CommandProgress ReadProgress(FieldReader& r) {
  CommandProgress m;
  m.assignment_id = r.NonEmptyString("assignmentId");
  m.progress = static_cast<int>(r.Integer("progress", 0, 100));
  m.checkpoint = r.Any("checkpoint");
  m.data = r.Any("data");
  return m;
}

CommandResult ReadResult(FieldReader& r) {
  CommandResult m;
  m.assignment_id = r.NonEmptyString("assignmentId");
  m.status = static_cast<ResultStatus>(r.Enum("status", {"success", "failure"}));
  m.output = r.Any("output");
  if (r.ok() && m.status == ResultStatus::kFailure) {
    FieldReader e = r.Object("error", /*required=*/true);
    m.error.code = e.NonEmptyString("code");
    m.error.message = e.OptionalString("message", "");
    m.error.details = e.OptionalObject("details", Json::object());
    m.error.retryable = e.OptionalBool("retryable", true);
  }
  return m;
}

Deregister ReadDeregister(FieldReader&) {
  return {};
}

Registered ReadRegistered(FieldReader& r) {
  Registered m;
  m.worker_id = r.WorkerId("workerId");
  m.heartbeat_interval_ms = r.Integer("heartbeatInterval", 1);
  m.heartbeat_timeout_ms = r.Integer("heartbeatTimeout", 1);
  m.batching = r.OptionalBool("batching", false);
  return m;
}

Command ReadCommand(FieldReader& r) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  Command m;
  m.message_id = r.NonEmptyString("messageId");
  m.assignment_id = r.NonEmptyString("assignmentId");
  m.command = r.NonEmptyString("command");
  m.resource = r.Any("resource");
  m.data = r.Any("data");
  FieldReader ex = r.Object("execution", /*required=*/true);
  m.execution.execution_id = ex.NonEmptyString("executionId");
  m.execution.step_id = ex.NonEmptyString("stepId");
  m.execution.step_index = static_cast<int>(ex.Integer("stepIndex", 0, kIntMax));
  m.execution.attempt = static_cast<int>(ex.Integer("attempt", 1, kIntMax));
  m.checkpoint = r.Any("checkpoint");
  m.timeout_seconds = r.Integer("timeoutSeconds", 0, std::numeric_limits<int64_t>::max(), 0);
  FieldReader meta = r.Object("metadata", /*required=*/false);
  m.metadata.correlation_id = meta.OptionalString("correlationId", "");
  m.metadata.priority = meta.OptionalString("priority", "normal");
  return m;
}

CommandCancel ReadCancel(FieldReader& r) {
  CommandCancel m;
  m.assignment_id = r.NonEmptyString("assignmentId");
  m.reason = r.OptionalString("reason", "");
  return m;
}

ProtocolError ReadError(FieldReader& r) {
  ProtocolError m;
  m.code = r.NonEmptyString("code");
  m.message = r.OptionalString("message", "");
  m.assignment_id = r.OptionalString("assignmentId", "");
  return m;
}

Status Invalid(const std::string& what) {
  return Status(errc::kValidation, "message: " + what);
}

// One entry per message type of one direction.
template <class Variant>
struct Entry {
  const char* type;
  Variant (*read)(FieldReader&);
};

template <class Variant, class M, M (*Read)(FieldReader&)>
Entry<Variant> Make() {
  return {M::kType, [](FieldReader& r) -> Variant { return Read(r); }};
}

const std::vector<Entry<WorkerMessage>>& WorkerEntries() {
  using W = WorkerMessage;
  static const std::vector<Entry<W>> entries = {
      Make<W, Register, ReadRegister>(),    Make<W, Heartbeat, ReadHeartbeat>(),
      Make<W, CommandAck, ReadAck>(),       Make<W, CommandProgress, ReadProgress>(),
      Make<W, CommandResult, ReadResult>(), Make<W, Deregister, ReadDeregister>(),
  };
  return entries;
}

const std::vector<Entry<ServerMessage>>& ServerEntries() {
  using S = ServerMessage;
  static const std::vector<Entry<S>> entries = {
      Make<S, Registered, ReadRegistered>(),
      Make<S, Command, ReadCommand>(),
      Make<S, CommandCancel, ReadCancel>(),
      Make<S, ProtocolError, ReadError>(),
  };
  return entries;
}

template <class Variant, class Other>
Result<Variant> Parse(const Json& json, const std::vector<Entry<Variant>>& entries,
                      const std::vector<Entry<Other>>& others, const char* direction) {
  if (!json.is_object()) return Invalid("expected a JSON object, got " + Describe(json));
  auto type_it = json.find("type");
  if (type_it == json.end()) return Invalid("field 'type': required");
  if (!type_it->is_string()) {
    return Invalid("field 'type': expected a string, got " + Describe(*type_it));
  }
  const std::string& type = type_it->get_ref<const std::string&>();
  for (const Entry<Variant>& e : entries) {
    if (type != e.type) continue;
    FieldReader reader(json, type);
    Variant message = e.read(reader);
    if (!reader.ok()) return reader.status();
    return message;
  }
  for (const Entry<Other>& e : others) {
    if (type == e.type) {
      return Invalid("field 'type': " + Describe(*type_it) + " is not a message " + direction);
    }
  }
  return Invalid("field 'type': unknown message type " + Describe(*type_it));
}

Result<Json> ParseText(std::string_view text) {
  Json out;
  JsonParseError error;
  // The message's own levels on top of its free-form fields' limit, which FieldReader
  // checks per field with a precise message.
  if (!ParseJsonText(text, &out, &error, {kMaxJsonDepth + 8})) {
    return Invalid("not valid JSON: " + error.Describe());
  }
  return out;
}

// A frame: one message, or a `batch` whose messages are parsed one by one by `parse`
// (which refuses a nested batch: "batch" is no message type of either direction).
template <class Message>
Result<std::vector<Message>> ParseFrame(const Json* json, Result<Message> (*parse)(const Json&),
                                        const char* opening) {
  std::vector<Message> out;
  auto type = json->is_object() ? json->find("type") : json->end();
  if (!json->is_object() || type == json->end() || *type != "batch") {
    Result<Message> one = parse(*json);
    if (!one.ok()) return one.status();
    out.push_back(std::move(one).value());
    return out;
  }
  auto messages = json->find("messages");
  if (messages == json->end())
    return Status(errc::kValidation, "batch: field 'messages': required");
  if (!messages->is_array() || messages->empty() || messages->size() > kMaxBatch) {
    const std::string got =
        !messages->is_array() ? Describe(*messages) : std::to_string(messages->size());
    return Status(errc::kValidation, "batch: field 'messages': expected an array of 1.." +
                                         std::to_string(kMaxBatch) + " messages, got " + got);
  }
  out.reserve(messages->size());
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    // Built only for an error: a frame carries up to kMaxBatch messages.
    auto where = [i] { return "batch: field 'messages[" + std::to_string(i) + "]': "; };
    if (m.is_object()) {
      auto t = m.find("type");
      if (t != m.end() && (*t == "batch" || *t == opening)) {
        return Status(errc::kValidation,
                      where() + "a '" + t->get<std::string>() + "' cannot be part of a batch");
      }
    }
    Result<Message> one = parse(m);
    if (!one.ok()) return Status(one.status().code(), where() + one.status().message());
    out.push_back(std::move(one).value());
  }
  return out;
}

}  // namespace

Result<std::vector<WorkerMessage>> ParseWorkerFrame(const Json& json) {
  return ParseFrame<WorkerMessage>(&json, &ParseWorkerMessage, Register::kType);
}

Result<std::vector<WorkerMessage>> ParseWorkerFrameText(std::string_view text) {
  Result<Json> json = ParseText(text);
  if (!json.ok()) return json.status();
  return ParseWorkerFrame(*json);
}

Result<std::vector<ServerMessage>> ParseServerFrameText(std::string_view text) {
  Result<Json> json = ParseText(text);
  if (!json.ok()) return json.status();
  return ParseFrame<ServerMessage>(&*json, &ParseServerMessage, Registered::kType);
}

Result<WorkerMessage> ParseWorkerMessage(const Json& json) {
  return Parse(json, WorkerEntries(), ServerEntries(), "from a worker");
}

Result<ServerMessage> ParseServerMessage(const Json& json) {
  return Parse(json, ServerEntries(), WorkerEntries(), "from the server");
}

Result<WorkerMessage> ParseWorkerMessageText(std::string_view text) {
  Result<Json> json = ParseText(text);
  if (!json.ok()) return json.status();
  return ParseWorkerMessage(*json);
}

Result<ServerMessage> ParseServerMessageText(std::string_view text) {
  Result<Json> json = ParseText(text);
  if (!json.ok()) return json.status();
  return ParseServerMessage(*json);
}

}  // namespace baton::protocol
