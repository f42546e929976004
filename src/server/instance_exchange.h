// What instances of one database do for each other, through it (<baton/store.h>):
//  - workers connected to any instance run steps of executions held by any other: the
//    coordinator's DispatchExchange, carried out on the store's OfferBoard;
//  - a control request (cancel, pause, resume, signal) that reaches an instance which
//    does not hold the execution is relayed to the one that does (ControlRelay).
//
// A thread talks to the database. Each turn it publishes what the coordinator offered,
// withdraws what it cancelled, reports the start and result of dispatches taken from
// other instances, renews those takes (dropping here the ones it lost), collects the
// news of this instance's offers, and takes open offers that workers here have room
// for. It waits between turns for a notification from the board (LISTEN), a request of
// the coordinator, or the poll interval: a lost notification costs latency, nothing else.
// A turn whose database calls fail keeps what it had to send for the next one. It also
// sends the control requests asked here, applies (on the engine thread) those asked of
// this instance, sends their answers, and hands the answers that came to their askers.
//
// Threading: Offer, Withdraw and GiveBack run on the engine thread and only queue;
// everything that touches the coordinator is posted to the engine thread.
#pragma once

#include <baton/store.h>

#include "server/engine_host.h"
#include "workers/coordinator.h"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton::server {

class InstanceExchange final : public workers::DispatchExchange {
 public:
  // How often the board is read without a notification.
  static constexpr Duration kPoll{500};
  // Offers read (and at most taken) per turn.
  static constexpr size_t kTakeBatch = 64;

  // How long an asker waits for the holder's answer.
  static constexpr Duration kAskTimeout{10'000};

  // None is owned; all outlive the exchange. `lease`: how long a take lasts. `board` and
  // `relay` share one connection (the store's): only this exchange's thread uses them.
  InstanceExchange(OfferBoard* board, ControlRelay* relay, EngineHost* host,
                   workers::Coordinator* coordinator, Duration lease)
      : board_(board), relay_(relay), host_(host), coordinator_(coordinator), lease_(lease) {}
  ~InstanceExchange() override { Stop(); }
  InstanceExchange(const InstanceExchange&) = delete;
  InstanceExchange& operator=(const InstanceExchange&) = delete;

  // Applies a request another instance asked of this one (engine thread) and reports
  // its outcome through the callback (any thread). Set before Start().
  using Apply =
      std::function<void(Engine&, const ControlRequest&, std::function<void(Status, Json)>)>;
  void SetApply(Apply apply) { apply_ = std::move(apply); }
  // Whether this instance leads the sweeps now (any thread): while it does, every
  // kCleanEvery the exchange removes from the board what no instance needs any more
  // (OfferBoard::Sweep). Set before Start().
  void SetLeading(std::function<bool()> leading) { leading_ = std::move(leading); }
  static constexpr Duration kCleanEvery{30'000};
  void Start();
  void Stop();

  // Asks `instance` to apply `request`; `done` gets its answer on this exchange's thread
  // (a store error when it could not be asked; UNAVAILABLE when no answer came within
  // kAskTimeout). Any thread.
  void Ask(const std::string& instance, ControlRequest request,
           std::function<void(Status, Json)> done);

  void Offer(const RunRequest& request) override;
  void Withdraw(const std::string& dispatch_id) override;
  void GiveBack(const std::string& dispatch_id) override;
  void Adopted(const std::string& dispatch_id) override;

  // A RunRequest and a RunResult as the board carries them.
  static Json RequestJson(const RunRequest& r);
  static RunRequest RequestFrom(const Json& j);
  static Json ResultJson(const RunResult& r);
  static RunResult ResultFrom(const Json& j);

 private:
  struct Report {
    std::string id;
    std::string status;  // running | done
    Json result;
  };
  void Run();
  // One turn; false when it should run again at once (a full batch taken).
  bool Turn();
  // Sends what the engine thread queued; what fails stays for the next turn.
  void Flush();
  void Renew();
  void Collect();
  bool TakeOpen();
  // Posts to the engine thread and waits for it (the board's turn is not urgent).
  template <class F>
  auto OnEngine(F f) -> decltype(f());
  // Sends asks and answers, applies what was asked here, delivers answers and timeouts.
  void Relay();
  void Complain(const std::string& what, const Status& s);
  void Queue(std::function<void(std::unique_lock<std::mutex>&)> add);

  OfferBoard* board_;
  ControlRelay* relay_;
  EngineHost* host_;
  workers::Coordinator* coordinator_;
  Duration lease_;

  std::mutex mu_;
  bool stopping_ = false;
  std::vector<OfferBoard::Offer> offers_;
  std::vector<std::string> withdrawals_;
  std::vector<std::string> give_backs_;  // ... and drops: taken home (see drops_)
  std::vector<std::string> drops_;
  std::deque<Report> reports_;
  struct Asking {
    std::string instance;
    ControlRequest request;
    std::function<void(Status, Json)> done;
  };
  std::vector<Asking> asks_;
  struct Answering {
    int64_t id = 0;
    Status status;
    Json result;
  };
  std::vector<Answering> answers_;
  Apply apply_;
  std::function<bool()> leading_;

  // The thread's own.
  std::map<std::string, int64_t> taken_;  // dispatch id -> take, for what runs here
  struct Waiting {
    std::function<void(Status, Json)> done;
    std::chrono::steady_clock::time_point until;
  };
  std::map<int64_t, Waiting> waiting_;  // asked of other instances, by request id
  std::chrono::steady_clock::time_point next_renewal_{};
  std::chrono::steady_clock::time_point next_sweep_{};
  std::chrono::steady_clock::time_point next_clean_{};
  std::chrono::steady_clock::time_point quiet_until_{};  // of complaints
  std::thread thread_;
};

}  // namespace baton::server
