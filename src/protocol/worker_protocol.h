// The worker protocol (docs/worker-protocol.md): one struct per message, its JSON form,
// and the parsers that check what comes over the wire. Used by both ends: the server's
// worker channel and `baton worker`.
//
// Every message is one JSON object with a "type" and camelCase field names. ToJson()
// writes every field of a struct (an optional one only when it is set); the parsers
// read back exactly what ToJson() wrote, and also:
//   - ignore unknown fields (forward compatibility); an optional field that is null is
//     the same as an absent one;
//   - refuse a missing required field, a wrong type, or a value out of range with code
//     VALIDATION and a message naming the message type, the field and what was wrong:
//       "command.progress: field 'progress': expected an integer 0..100, got 140"
//       "register: field 'workerId': required"
//       "command: field 'execution.attempt': expected an integer >= 1, got 0"
//       "register: field 'commands[1]': expected a non-empty string, got 3"
//   - refuse a message that is not an object, has no string "type", names an unknown
//     type or one of the other direction ("message: field 'type': ...").
// Integers are JSON integers (2.5 and 2.0 are not); those held in an int (currentLoad,
// stepIndex, attempt) go up to 2147483647. Strings are taken as they are.
// Free-form values (resource, data, checkpoint, output, details) may nest up to 128
// arrays or objects deep; deeper ones are refused ("nested deeper than 128 levels")
// rather than copied, as copying and comparing JSON recurse.
//
// Fields (R = required; everything else has the default shown):
//   register          workerId R: 1..100 characters of [A-Za-z0-9._-];
//                     capacity R: integer 1..10000; commands R: non-empty array of
//                     non-empty strings; nodeId: non-empty string, default workerId;
//                     host: string, ""; tags: array of non-empty strings, [];
//                     sessionId: string of at most 128 characters, "";
//                     batching: boolean, false (it reads `batch` frames).
//   heartbeat         currentLoad R: integer >= 0; capacity R: integer 1..10000;
//                     status R: "ONLINE" | "DRAINING".
//   command.ack       assignmentId R: non-empty string; status R: "accepted" |
//                     "rejected"; estimatedDuration: integer >= 0 (seconds), none.
//   command.progress  assignmentId R; progress R: integer 0..100; checkpoint, data: any
//                     JSON, null.
//   command.result    assignmentId R; status R: "success" | "failure"; output: any JSON,
//                     null. error: required when status is failure (ignored otherwise),
//                     an object: code R: non-empty string; message: string, "";
//                     details: object, {}; retryable: boolean, true.
//   deregister        no fields (the worker is leaving: its last message).
//   registered        workerId R (as in register); heartbeatInterval R and
//                     heartbeatTimeout R: integers >= 1 (milliseconds); batching:
//                     boolean, false (the server reads `batch` frames; written only
//                     when true).
//   batch             messages R: an array of 1..kMaxBatch messages of the frame's
//                     direction, none of them a batch, register or registered. One
//                     frame carrying several messages, handled in order as if each had
//                     come alone. A side sends it only to a peer that said `batching`.
//   command           messageId R, assignmentId R, command R: non-empty strings;
//                     execution R: an object: executionId R, stepId R: non-empty
//                     strings; stepIndex R: integer >= 0; attempt R: integer >= 1.
//                     resource, data, checkpoint: any JSON, null; timeoutSeconds:
//                     integer >= 0 (0 = none), 0; metadata: an object, {}:
//                     correlationId: string, ""; priority: string, "normal".
//   command.cancel    assignmentId R; reason: string, "".
//   error             code R: non-empty string; message: string, ""; assignmentId:
//                     string, "" (written only when not empty).
//
// Thread-safe: pure functions over values. Nothing here throws.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace baton::protocol {

inline constexpr int kMaxCapacity = 10000;
inline constexpr size_t kMaxWorkerIdLength = 100;
inline constexpr size_t kMaxJsonDepth = 128;
inline constexpr size_t kMaxBatch = 1000;  // messages in one `batch` frame
// Bytes in one `batch` frame, well under the server's 1 MiB frame limit: a message larger
// than this goes in a frame of its own.
inline constexpr size_t kMaxBatchBytes = 512 << 10;

// ---- worker -> server ----

struct Register {
  static constexpr const char* kType = "register";
  std::string worker_id;
  std::string node_id;  // empty: worker_id (not written; the parser fills it in)
  std::string host;
  int capacity = 1;
  std::vector<std::string> commands;
  std::vector<std::string> tags;
  // One per worker process (its incarnation), the same across its reconnects. A new one
  // under a known workerId means the previous process is gone: what it held is placed
  // again at once. Empty: unknown (older workers), treated as the same process.
  std::string session_id;
  // It reads `batch` frames: the server may send several messages in one.
  bool batching = false;
  bool operator==(const Register&) const = default;
};

enum class WorkerStatus { kOnline, kDraining };

struct Heartbeat {
  static constexpr const char* kType = "heartbeat";
  int current_load = 0;
  int capacity = 1;
  WorkerStatus status = WorkerStatus::kOnline;
  bool operator==(const Heartbeat&) const = default;
};

enum class AckStatus { kAccepted, kRejected };

struct CommandAck {
  static constexpr const char* kType = "command.ack";
  std::string assignment_id;
  AckStatus status = AckStatus::kAccepted;
  std::optional<int64_t> estimated_duration;  // seconds
  bool operator==(const CommandAck&) const = default;
};

struct CommandProgress {
  static constexpr const char* kType = "command.progress";
  std::string assignment_id;
  int progress = 0;  // 0..100
  Json checkpoint;   // null: none
  Json data;         // null: none
  bool operator==(const CommandProgress&) const = default;
};

enum class ResultStatus { kSuccess, kFailure };

struct CommandError {
  std::string code;
  std::string message;
  Json details = Json::object();
  bool retryable = true;  // false: the step fails without using its remaining retries
  bool operator==(const CommandError&) const = default;
};

struct CommandResult {
  static constexpr const char* kType = "command.result";
  std::string assignment_id;
  ResultStatus status = ResultStatus::kSuccess;
  Json output;         // null: none (written when not null, whatever the status)
  CommandError error;  // failure only (not written on success)
  bool operator==(const CommandResult&) const = default;

  static CommandResult Success(std::string assignment_id, Json output);
  static CommandResult Failure(std::string assignment_id, CommandError error, Json output = {});
};

// The worker's last message before it closes the connection (long-poll: POST
// .../deregister): the server marks it OFFLINE and stops expecting heartbeats.
struct Deregister {
  static constexpr const char* kType = "deregister";
  bool operator==(const Deregister&) const = default;
};

using WorkerMessage =
    std::variant<Register, Heartbeat, CommandAck, CommandProgress, CommandResult, Deregister>;

// ---- server -> worker ----

struct Registered {
  static constexpr const char* kType = "registered";
  std::string worker_id;
  int64_t heartbeat_interval_ms = 30000;
  int64_t heartbeat_timeout_ms = 60000;
  // The server reads `batch` frames: the worker may send several messages in one.
  bool batching = false;
  bool operator==(const Registered&) const = default;
};

struct CommandExecution {
  std::string execution_id;
  std::string step_id;
  int step_index = 0;
  int attempt = 1;
  bool operator==(const CommandExecution&) const = default;
};

struct CommandMetadata {
  std::string correlation_id;
  std::string priority = "normal";
  bool operator==(const CommandMetadata&) const = default;
};

struct Command {
  static constexpr const char* kType = "command";
  std::string message_id;
  std::string assignment_id;
  std::string command;
  Json resource;  // the step's fields, templates rendered; null when absent
  Json data;
  CommandExecution execution;
  Json checkpoint;              // the attempt's last checkpoint when reassigned, else null
  int64_t timeout_seconds = 0;  // 0 = none
  CommandMetadata metadata;
  bool operator==(const Command&) const = default;
};

struct CommandCancel {
  static constexpr const char* kType = "command.cancel";
  std::string assignment_id;
  std::string reason;
  bool operator==(const CommandCancel&) const = default;
};

// The "error" message (e.g. STALE_ASSIGNMENT).
struct ProtocolError {
  static constexpr const char* kType = "error";
  std::string code;
  std::string message;
  std::string assignment_id;  // empty: none
  bool operator==(const ProtocolError&) const = default;
};

using ServerMessage = std::variant<Registered, Command, CommandCancel, ProtocolError>;

// ---- enums as on the wire ----

const char* ToString(WorkerStatus status);  // "ONLINE", "DRAINING"
const char* ToString(AckStatus status);     // "accepted", "rejected"
const char* ToString(ResultStatus status);  // "success", "failure"

// ---- to JSON ----

Json ToJson(const Register& m);
Json ToJson(const Heartbeat& m);
Json ToJson(const CommandAck& m);
Json ToJson(const CommandProgress& m);
Json ToJson(const CommandResult& m);
Json ToJson(const Deregister& m);
Json ToJson(const Registered& m);
Json ToJson(const Command& m);
Json ToJson(const CommandCancel& m);
Json ToJson(const ProtocolError& m);
Json ToJson(const WorkerMessage& m);
Json ToJson(const ServerMessage& m);

// The compact JSON text of a message (one WebSocket frame). Never throws: invalid UTF-8
// in a string becomes U+FFFD.
std::string ToText(const WorkerMessage& m);
std::string ToText(const ServerMessage& m);

// The "type" of the message held.
const char* TypeOf(const WorkerMessage& m);
const char* TypeOf(const ServerMessage& m);

// ---- parsing ----

// A message from a worker / from the server, checked as described above.
Result<WorkerMessage> ParseWorkerMessage(const Json& json);
Result<ServerMessage> ParseServerMessage(const Json& json);
// The same from JSON text; text that is not JSON is a VALIDATION error
// ("message: not valid JSON: ...").
Result<WorkerMessage> ParseWorkerMessageText(std::string_view text);
Result<ServerMessage> ParseServerMessageText(std::string_view text);

// ---- frames ----
// A WebSocket frame holds one message or a `batch` of them (see the table above).

// The messages of one frame from a worker / from the server, in order. A message inside a
// batch that does not parse fails the whole frame, its error naming the index:
// "batch: field 'messages[2]': command.ack: field 'status': required".
Result<std::vector<WorkerMessage>> ParseWorkerFrameText(std::string_view text);
Result<std::vector<ServerMessage>> ParseServerFrameText(std::string_view text);
// The same from a frame already parsed as JSON (a long-poll request's body).
Result<std::vector<WorkerMessage>> ParseWorkerFrame(const Json& json);

// The frame of several messages already turned into text (ToText), joined without
// parsing them again. One text is sent as it is; callers split lists longer than
// kMaxBatch.
std::string BatchText(const std::vector<std::string>& texts);

// Messages already turned into text, in order, put into as few frames as the limits
// allow: consecutive texts share a `batch` frame of at most kMaxBatch messages and
// `max_bytes` bytes; a text larger than that goes alone, as itself.
struct Frame {
  std::string text;
  size_t messages = 1;
};
std::vector<Frame> BatchFrames(std::vector<std::string> texts, size_t max_bytes = kMaxBatchBytes);

// Whether `id` is a valid workerId (1..100 characters of [A-Za-z0-9._-]).
bool IsValidWorkerId(std::string_view id);

// Whether `value` nests more than `limit` arrays or objects (iteratively: any depth is
// safe to ask about). The parsers refuse free-form values deeper than kMaxJsonDepth.
bool NestedDeeperThan(const Json& value, size_t limit);

}  // namespace baton::protocol
