// Messages to JSON. Parsing: worker_protocol_parse.cpp.
#include "protocol/worker_protocol.h"

#include "common/json_text.h"

namespace baton::protocol {
namespace {

Json Typed(const char* type) {
  return Json{{"type", type}};
}

}  // namespace

const char* ToString(WorkerStatus status) {
  return status == WorkerStatus::kDraining ? "DRAINING" : "ONLINE";
}
const char* ToString(AckStatus status) {
  return status == AckStatus::kRejected ? "rejected" : "accepted";
}
const char* ToString(ResultStatus status) {
  return status == ResultStatus::kFailure ? "failure" : "success";
}

bool IsValidWorkerId(std::string_view id) {
  if (id.empty() || id.size() > kMaxWorkerIdLength) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Iterative: the value may be far deeper than the stack would allow a recursion to go.
bool NestedDeeperThan(const Json& value, size_t limit) {
  std::vector<std::pair<const Json*, size_t>> stack = {{&value, 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    if (depth == limit) return true;
    for (const Json& child : *v) stack.emplace_back(&child, depth + 1);
  }
  return false;
}

CommandResult CommandResult::Success(std::string assignment_id, Json output) {
  CommandResult r;
  r.assignment_id = std::move(assignment_id);
  r.output = std::move(output);
  return r;
}

CommandResult CommandResult::Failure(std::string assignment_id, CommandError error, Json output) {
  CommandResult r;
  r.assignment_id = std::move(assignment_id);
  r.status = ResultStatus::kFailure;
  r.error = std::move(error);
  r.output = std::move(output);
  return r;
}

Json ToJson(const Register& m) {
  Json j = Typed(Register::kType);
  j["workerId"] = m.worker_id;
  if (!m.node_id.empty()) j["nodeId"] = m.node_id;
  j["host"] = m.host;
  j["capacity"] = m.capacity;
  j["commands"] = m.commands;
  j["tags"] = m.tags;
  if (!m.session_id.empty()) j["sessionId"] = m.session_id;
  if (m.batching) j["batching"] = true;
  return j;
}

Json ToJson(const Heartbeat& m) {
  Json j = Typed(Heartbeat::kType);
  j["currentLoad"] = m.current_load;
  j["capacity"] = m.capacity;
  j["status"] = ToString(m.status);
  return j;
}

Json ToJson(const CommandAck& m) {
  Json j = Typed(CommandAck::kType);
  j["assignmentId"] = m.assignment_id;
  j["status"] = ToString(m.status);
  if (m.estimated_duration) j["estimatedDuration"] = *m.estimated_duration;
  return j;
}

Json ToJson(const CommandProgress& m) {
  Json j = Typed(CommandProgress::kType);
  j["assignmentId"] = m.assignment_id;
  j["progress"] = m.progress;
  if (!m.checkpoint.is_null()) j["checkpoint"] = m.checkpoint;
  if (!m.data.is_null()) j["data"] = m.data;
  return j;
}

Json ToJson(const CommandResult& m) {
  Json j = Typed(CommandResult::kType);
  j["assignmentId"] = m.assignment_id;
  j["status"] = ToString(m.status);
  if (!m.output.is_null()) j["output"] = m.output;
  if (m.status == ResultStatus::kFailure) {
    j["error"] = {{"code", m.error.code},
                  {"message", m.error.message},
                  {"details", m.error.details},
                  {"retryable", m.error.retryable}};
  }
  return j;
}

Json ToJson(const Deregister&) {
  return Typed(Deregister::kType);
}

Json ToJson(const Registered& m) {
  Json j = Typed(Registered::kType);
  j["workerId"] = m.worker_id;
  j["heartbeatInterval"] = m.heartbeat_interval_ms;
  j["heartbeatTimeout"] = m.heartbeat_timeout_ms;
  if (m.batching) j["batching"] = true;
  return j;
}

Json ToJson(const Command& m) {
  Json j = Typed(Command::kType);
  j["messageId"] = m.message_id;
  j["assignmentId"] = m.assignment_id;
  j["command"] = m.command;
  j["resource"] = m.resource;
  j["data"] = m.data;
  j["execution"] = {{"executionId", m.execution.execution_id},
                    {"stepId", m.execution.step_id},
                    {"stepIndex", m.execution.step_index},
                    {"attempt", m.execution.attempt}};
  j["checkpoint"] = m.checkpoint;
  j["timeoutSeconds"] = m.timeout_seconds;
  j["metadata"] = {{"correlationId", m.metadata.correlation_id}, {"priority", m.metadata.priority}};
  return j;
}

Json ToJson(const CommandCancel& m) {
  Json j = Typed(CommandCancel::kType);
  j["assignmentId"] = m.assignment_id;
  j["reason"] = m.reason;
  return j;
}

Json ToJson(const ProtocolError& m) {
  Json j = Typed(ProtocolError::kType);
  j["code"] = m.code;
  j["message"] = m.message;
  if (!m.assignment_id.empty()) j["assignmentId"] = m.assignment_id;
  return j;
}

Json ToJson(const WorkerMessage& m) {
  return std::visit([](const auto& v) { return ToJson(v); }, m);
}
Json ToJson(const ServerMessage& m) {
  return std::visit([](const auto& v) { return ToJson(v); }, m);
}

std::string ToText(const WorkerMessage& m) {
  return ToJson(m).dump(-1, ' ', false, Json::error_handler_t::replace);
}
namespace {

// A command is the message a busy server sends most: written directly, without building
// its DOM first. It parses back to what ToJson(Command) writes (the tests compare them).
std::string CommandText(const Command& m) {
  std::string out;
  out.reserve(320);
  out += R"({"type":"command","messageId":)";
  AppendJsonString(out, m.message_id);
  out += ",\"assignmentId\":";
  AppendJsonString(out, m.assignment_id);
  out += ",\"command\":";
  AppendJsonString(out, m.command);
  out += ",\"resource\":";
  AppendJsonValue(out, m.resource);
  out += ",\"data\":";
  AppendJsonValue(out, m.data);
  out += ",\"execution\":{\"executionId\":";
  AppendJsonString(out, m.execution.execution_id);
  out += ",\"stepId\":";
  AppendJsonString(out, m.execution.step_id);
  AppendJsonMember(out, "stepIndex", m.execution.step_index);
  AppendJsonMember(out, "attempt", m.execution.attempt);
  out += "},\"checkpoint\":";
  AppendJsonValue(out, m.checkpoint);
  AppendJsonMember(out, "timeoutSeconds", m.timeout_seconds);
  out += ",\"metadata\":{\"correlationId\":";
  AppendJsonString(out, m.metadata.correlation_id);
  out += ",\"priority\":";
  AppendJsonString(out, m.metadata.priority);
  out += "}}";
  return out;
}

}  // namespace

std::string ToText(const ServerMessage& m) {
  if (const auto* command = std::get_if<Command>(&m)) return CommandText(*command);
  return ToJson(m).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string BatchText(const std::vector<std::string>& texts) {
  if (texts.size() == 1) return texts.front();
  size_t size = 40;
  for (const std::string& t : texts) size += t.size() + 1;
  std::string out;
  out.reserve(size);
  out += R"({"type":"batch","messages":[)";
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) out += ',';
    out += texts[i];
  }
  out += "]}";
  return out;
}

std::vector<Frame> BatchFrames(std::vector<std::string> texts, size_t max_bytes) {
  std::vector<Frame> frames;
  std::vector<std::string> group;
  size_t group_bytes = 0;
  auto close_group = [&] {
    if (group.empty()) return;
    frames.push_back({BatchText(group), group.size()});
    group.clear();
    group_bytes = 0;
  };
  constexpr size_t kFraming = 40;  // {"type":"batch","messages":[ ... ]}
  for (std::string& text : texts) {
    const size_t size = text.size() + 1;
    if (size + kFraming > max_bytes) {  // too big to share a frame
      close_group();
      frames.push_back({std::move(text), 1});
      continue;
    }
    if (group.size() == kMaxBatch || group_bytes + size + kFraming > max_bytes) close_group();
    group_bytes += size;
    group.push_back(std::move(text));
  }
  close_group();
  return frames;
}

const char* TypeOf(const WorkerMessage& m) {
  return std::visit([](const auto& v) -> const char* { return v.kType; }, m);
}
const char* TypeOf(const ServerMessage& m) {
  return std::visit([](const auto& v) -> const char* { return v.kType; }, m);
}

}  // namespace baton::protocol
