#include "store/record_tables.h"

#include <memory>
#include <string>

namespace baton::rows {

std::string StringsJson(const std::vector<std::string>& strings) {
  return Json(strings).dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool RowIn::JsonAt(int col, Json* out) const {
  if (IsNull(col)) {
    *out = Json();
    return true;
  }
  const std::string_view text = Text(col);
  *out = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return !out->is_discarded();
}

bool RowIn::StringsAt(int col, std::vector<std::string>* out) const {
  Json array;
  if (!JsonAt(col, &array) || !array.is_array()) return false;
  out->clear();
  for (const Json& s : array) {
    if (!s.is_string()) return false;
    out->push_back(s.get<std::string>());
  }
  return true;
}

namespace {

using E = ExecutionRecord;
using S = StepRecord;
using A = AttemptRecord;

// The definition snapshot is kept as the text it was stored as (WorkflowFromSnapshot
// reads it when the execution resumes); none is NULL.
Column<E> Definition() {
  return {"definition",
          [](const E& e, RowOut& o) {
            if (e.definition && !e.definition->empty()) return o.Text(*e.definition);
            o.Null();
          },
          [](const RowIn& in, int col, E* e) {
            e->definition =
                in.IsNull(col) ? nullptr : std::make_shared<const std::string>(in.Text(col));
            return true;
          }};
}

// A dead letter's id: 0 until the database numbers it.
Column<DeadLetterRecord> DeadLetterId() {
  using D = DeadLetterRecord;
  return {"id",
          [](const D& d, RowOut& o) {
            if (d.id == 0) return o.Null();
            o.Int(d.id);
          },
          [](const RowIn& in, int col, D* d) { return in.Int(col, &d->id); },
          /*key=*/true,
          /*filed=*/false,
          /*integer=*/true};
}

Column<BreakerRecord> BreakerState() {
  using B = BreakerRecord;
  return {"state", [](const B& b, RowOut& o) { o.Text(b.state); },
          [](const RowIn& in, int col, B* b) {
            b->state = std::string(in.Text(col));
            return b->state == kBreakerClosed || b->state == kBreakerOpen ||
                   b->state == kBreakerHalfOpen;
          }};
}

}  // namespace

template <>
const Table<WorkflowRecord>& TableOf<WorkflowRecord>() {
  using W = WorkflowRecord;
  static const Table<W> t{
      "workflows",
      {Text<&W::ns>("ns", true), Text<&W::name>("name", true), Int<&W::version>("version", true),
       JsonText<&W::definition>("definition"), Int<&W::created_at>("created_at")},
      [](const W& w) { return "workflow " + w.name; }};
  return t;
}

template <>
const Table<ExecutionRecord>& TableOf<ExecutionRecord>() {
  static const Table<E> t{
      "executions",
      {Text<&E::id, E>("id", true), Filed(Text<&E::ns, E>("ns")),
       Filed(Text<&E::workflow>("workflow")), Int<&E::version>("version"), Definition(),
       JsonText<&E::input, E>("input"), Enum<&E::status, &ParseExecutionStatus, E>("status"),
       Int<&E::priority, E>("priority"), JsonText<&E::output, E>("output"),
       JsonText<&E::error, E>("error"), Filed(Text<&E::parent_id>("parent_id")),
       Text<&E::parent_step>("parent_step"), Int<&E::parent_attempt>("parent_attempt"),
       Filed(Text<&E::idempotency_key>("idempotency_key")), JsonText<&E::vars, E>("vars"),
       Filed(Int<&E::created_at, E>("created_at")), Int<&E::started_at, E>("started_at"),
       Int<&E::completed_at, E>("completed_at"), Int<&E::deadline, E>("deadline")},
      [](const E& e) { return "execution " + e.id; }};
  return t;
}

template <>
const Table<StepRecord>& TableOf<StepRecord>() {
  static const Table<S> t{
      "steps",
      {Text<&S::execution_id>("execution_id", true), Text<&S::step_id>("step_id", true),
       Int<&S::index, S>("idx"), Enum<&S::status, &ParseStepStatus, S>("status"),
       Int<&S::attempts, S>("attempts"), Int<&S::attempt_base, S>("attempt_base"),
       Int<&S::progress, S>("progress"), JsonText<&S::output, S>("output"),
       JsonText<&S::error, S>("error"), Int<&S::exit_code, S>("exit_code"),
       Text<&S::stderr_tail, S>("stderr_tail"), Text<&S::assignment_id, S>("assignment_id"),
       Int<&S::started_at, S>("started_at"), Int<&S::completed_at, S>("completed_at"),
       Int<&S::retry_at, S>("retry_at"), Int<&S::deadline, S>("deadline")},
      [](const S& s) { return "step " + s.execution_id + "/" + s.step_id; }};
  return t;
}

template <>
const Table<AttemptRecord>& TableOf<AttemptRecord>() {
  static const Table<A> t{
      "attempts",
      {Text<&A::execution_id>("execution_id", true), Text<&A::step_id>("step_id", true),
       Int<&A::attempt>("attempt", true), Enum<&A::status, &ParseStepStatus>("status"),
       Text<&A::assignment_id>("assignment_id"), JsonText<&A::error>("error"),
       Int<&A::started_at>("started_at"), Int<&A::completed_at>("completed_at")},
      [](const A& a) {
        return "attempt " + std::to_string(a.attempt) + " of " + a.execution_id + "/" + a.step_id;
      }};
  return t;
}

template <>
const Table<EventRecord>& TableOf<EventRecord>() {
  using V = EventRecord;
  static const Table<V> t{
      "events",
      {Text<&V::execution_id>("execution_id", true), Int<&V::seq>("seq", true),
       Text<&V::type>("type"), Text<&V::step_id>("step_id"), Int<&V::attempt>("attempt"),
       JsonText<&V::data>("data"), Int<&V::time>("time"), Int<&V::position>("position")},
      [](const V& e) {
        return "event seq " + std::to_string(e.seq) + " of execution " + e.execution_id;
      },
      /*insert_only=*/true};
  return t;
}

template <>
const Table<DeadLetterRecord>& TableOf<DeadLetterRecord>() {
  using D = DeadLetterRecord;
  static const Table<D> t{
      "dead_letters",
      {DeadLetterId(), Text<&D::ns>("ns"), Text<&D::execution_id>("execution_id"),
       Text<&D::workflow>("workflow"), Int<&D::version>("version"), Text<&D::step_id>("step_id"),
       JsonText<&D::input>("input"), JsonText<&D::errors>("errors"), Text<&D::code>("code"),
       Text<&D::fingerprint>("fingerprint"), Int<&D::first_failed_at>("first_failed_at"),
       Int<&D::last_failed_at>("last_failed_at"), Int<&D::first_attempt>("first_attempt"),
       Int<&D::last_attempt>("last_attempt"), Text<&D::status>("status"),
       Int<&D::resolved_at>("resolved_at"), Int<&D::replay_attempt>("replay_attempt"),
       Int<&D::created_at>("created_at")},
      [](const D& d) {
        return "dead letter of step " + d.step_id + " of execution " + d.execution_id;
      },
      /*insert_only=*/false,
      /*numbered=*/true};
  return t;
}

template <>
const Table<TokenRecord>& TableOf<TokenRecord>() {
  using T = TokenRecord;
  static const Table<T> t{"tokens",
                          {Text<&T::id>("id", true), Text<&T::ns>("ns"), Text<&T::name>("name"),
                           Strings<&T::scopes>("scopes"), Text<&T::secret_hash>("secret_hash"),
                           Int<&T::created_at>("created_at"), Int<&T::revoked_at>("revoked_at")},
                          [](const T& r) { return "token " + r.id; }};
  return t;
}

template <>
const Table<ScheduleRecord>& TableOf<ScheduleRecord>() {
  using R = ScheduleRecord;
  static const Table<R> t{
      "schedules",
      {Text<&R::id>("id", true), Text<&R::ns>("ns"), Text<&R::name>("name"),
       Text<&R::workflow>("workflow"), Int<&R::version>("version"), Text<&R::cron>("cron"),
       Text<&R::timezone>("timezone"), JsonText<&R::input>("input"), Text<&R::overlap>("overlap"),
       Text<&R::catchup>("catchup"), Int<&R::next_fire_at>("next_fire_at"),
       Int<&R::last_fire_at>("last_fire_at"), Text<&R::last_execution_id>("last_execution_id"),
       Int<&R::created_at>("created_at")},
      [](const R& r) { return "schedule " + r.id; }};
  return t;
}

template <>
const Table<HookRecord>& TableOf<HookRecord>() {
  using H = HookRecord;
  static const Table<H> t{
      "hooks",
      {Text<&H::name>("name", true), Text<&H::ns>("ns"), Text<&H::workflow>("workflow"),
       Int<&H::version>("version"), Text<&H::secret>("secret"), Int<&H::created_at>("created_at")},
      [](const H& h) { return "hook " + h.name; }};
  return t;
}

template <>
const Table<TriggerRecord>& TableOf<TriggerRecord>() {
  using T = TriggerRecord;
  static const Table<T> t{"triggers",
                          {Text<&T::id>("id", true), Text<&T::ns>("ns"), Text<&T::name>("name"),
                           Text<&T::source>("source"), Strings<&T::on>("statuses"),
                           Text<&T::workflow>("workflow"), Int<&T::version>("version"),
                           JsonText<&T::input>("input"), Int<&T::created_at>("created_at")},
                          [](const T& r) { return "trigger " + r.id; }};
  return t;
}

template <>
const Table<DeliveryRecord>& TableOf<DeliveryRecord>() {
  using D = DeliveryRecord;
  static const Table<D> t{
      "deliveries",
      {Text<&D::id>("id", true), Text<&D::ns>("ns"), Text<&D::execution_id>("execution_id"),
       Text<&D::event>("event"), Text<&D::kind>("kind"), Text<&D::target>("target"),
       JsonText<&D::payload>("payload"), Enum<&D::status, &ParseDeliveryStatus>("status"),
       Int<&D::attempts>("attempts"), Int<&D::next_attempt_at>("next_attempt_at"),
       JsonText<&D::last_error>("last_error"), Text<&D::result>("result"),
       Int<&D::created_at>("created_at"), Int<&D::updated_at>("updated_at")},
      [](const D& d) { return "delivery " + d.id; }};
  return t;
}

template <>
const Table<WorkerRecord>& TableOf<WorkerRecord>() {
  using W = WorkerRecord;
  static const Table<W> t{
      "workers",
      {Text<&W::id>("id", true), Text<&W::ns>("ns"), Text<&W::node>("node"), Text<&W::host>("host"),
       Text<&W::version>("version"), Text<&W::session>("session"), Int<&W::capacity>("capacity"),
       Strings<&W::commands>("commands"), Strings<&W::tags>("tags"), Text<&W::status>("status"),
       Int<&W::registered_at>("registered_at"), Int<&W::last_heartbeat>("last_heartbeat"),
       Int<&W::updated_at>("updated_at")},
      [](const W& w) { return "worker " + w.id; }};
  return t;
}

template <>
const Table<AssignmentRecord>& TableOf<AssignmentRecord>() {
  using R = AssignmentRecord;
  static const Table<R> t{
      "assignments",
      {Text<&R::dispatch_id>("dispatch_id", true), Filed(Text<&R::id>("id")),
       Filed(Text<&R::ns>("ns")), Filed(Text<&R::execution_id>("execution_id")),
       Text<&R::step_id>("step_id"), Int<&R::attempt>("attempt"), Text<&R::command>("command"),
       Filed(Text<&R::worker_id>("worker_id")), Text<&R::status>("status"),
       Int<&R::progress>("progress"), JsonText<&R::checkpoint>("checkpoint"),
       Int<&R::reassignments>("reassignments"), Filed(Int<&R::created_at>("created_at")),
       Int<&R::updated_at>("updated_at")},
      [](const R& a) { return "assignment " + a.dispatch_id; }};
  return t;
}

template <>
const Table<ReassignmentRecord>& TableOf<ReassignmentRecord>() {
  using R = ReassignmentRecord;
  static const Table<R> t{
      "reassignments",
      {Text<&R::id>("id", true), Text<&R::ns>("ns"), Text<&R::dispatch_id>("dispatch_id"),
       Text<&R::assignment_id>("assignment_id"), Text<&R::execution_id>("execution_id"),
       Text<&R::step_id>("step_id"), Text<&R::from_worker>("from_worker"),
       Text<&R::to_worker>("to_worker"), Text<&R::reason>("reason"),
       JsonText<&R::checkpoint>("checkpoint"), Int<&R::at>("at")},
      [](const R& r) { return "reassignment " + r.id; },
      /*insert_only=*/true};
  return t;
}

template <>
const Table<SignalRecord>& TableOf<SignalRecord>() {
  using R = SignalRecord;
  static const Table<R> t{
      "signals",
      {Text<&R::execution_id>("execution_id", true), Int<&R::seq>("seq", true), Text<&R::ns>("ns"),
       Text<&R::name>("name"), JsonText<&R::payload>("payload"), Int<&R::sent_at>("sent_at"),
       Text<&R::consumed_by>("consumed_by"), Int<&R::consumed_at>("consumed_at")},
      [](const R& r) {
        return "signal " + std::to_string(r.seq) + " of execution " + r.execution_id;
      }};
  return t;
}

template <>
const Table<BreakerRecord>& TableOf<BreakerRecord>() {
  using B = BreakerRecord;
  static const Table<B> t{
      "breakers",
      {Text<&B::ns>("ns", true), Text<&B::key>("key", true), BreakerState(),
       Int<&B::failures>("failures"), Int<&B::successes>("successes"),
       Int<&B::opened_at>("opened_at"), Int<&B::probe_at>("probe_at"), Int<&B::trips>("trips"),
       JsonText<&B::last_error>("last_error"), Int<&B::failure_threshold>("failure_threshold"),
       Int<&B::recovery_timeout_ms>("recovery_timeout_ms"),
       Int<&B::success_threshold>("success_threshold"), Int<&B::updated_at>("updated_at")},
      [](const B& b) { return "circuit breaker '" + b.key + "' of namespace " + b.ns; }};
  return t;
}

template <>
const Table<PoolRecord>& TableOf<PoolRecord>() {
  using P = PoolRecord;
  static const Table<P> t{
      "pools",
      {Text<&P::ns>("ns", true), Text<&P::name>("name", true), Int<&P::slots>("slots"),
       Int<&P::created_at>("created_at"), Int<&P::updated_at>("updated_at")},
      [](const P& p) { return "pool '" + p.name + "' of namespace " + p.ns; }};
  return t;
}

template <>
const Table<CacheEntryRecord>& TableOf<CacheEntryRecord>() {
  using C = CacheEntryRecord;
  static const Table<C> t{
      "cache_entries",
      {Text<&C::ns>("ns", true), Text<&C::key>("key", true), Text<&C::workflow>("workflow"),
       Text<&C::step_id>("step_id"), Text<&C::execution_id>("execution_id"),
       JsonText<&C::output>("output"), Int<&C::bytes>("bytes"), Int<&C::created_at>("created_at"),
       Int<&C::expires_at>("expires_at"), Int<&C::last_hit_at>("last_hit_at"),
       Int<&C::hits>("hits")},
      [](const C& c) { return "cache entry " + c.key + " of namespace " + c.ns; }};
  return t;
}

}  // namespace baton::rows
