// The board of work offered between instances (OfferBoard in <baton/store.h>) on the
// table offered_dispatches (migration 3).
//
// It has a connection of its own, LISTENing on `baton_offers`, so that waiting for news
// never holds the store's writing connection; a connection that is gone is opened again
// (and LISTENs again) on the next call. Wake() writes to a pipe that Wait() polls beside
// the connection's socket.
#pragma once

#include <baton/store.h>

#include "store/postgres/pg_connection.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::pg {

// Also the ControlRelay (table control_requests): the same connection and notifications.
class PgOfferBoard final : public OfferBoard, public ControlRelay {
 public:
  // `instance`: this instance's name; `lease`: how long a take lasts unless renewed.
  PgOfferBoard(std::string url, Connection::Options options, std::string instance, Duration lease);
  ~PgOfferBoard() override;
  PgOfferBoard(const PgOfferBoard&) = delete;
  PgOfferBoard& operator=(const PgOfferBoard&) = delete;

  Status Publish(const std::vector<Offer>& offers) override;
  Status Withdraw(const std::vector<std::string>& ids) override;
  Result<std::vector<OfferedDispatch>> Open(size_t limit) override;
  Result<std::vector<OfferedDispatch>> Take(const std::vector<std::string>& ids) override;
  Result<bool> Report(const std::string& id, int64_t take, const std::string& status,
                      const Json& result) override;
  Status GiveBack(const std::string& id, int64_t take) override;
  Status Drop(const std::string& id, int64_t take) override;
  Result<std::vector<std::pair<std::string, int64_t>>> Renew() override;
  Result<std::vector<OfferedDispatch>> Collect(const std::vector<std::string>& ids) override;
  Result<size_t> Sweep(Duration older_than) override;
  Result<bool> Wait(Duration timeout) override;
  void Wake() override;

  Result<int64_t> Ask(const std::string& instance, const ControlRequest& request) override;
  Result<std::vector<ControlRequest>> Asked() override;
  Status Answer(int64_t id, const Status& status, const Json& result) override;
  Result<std::vector<ControlAnswer>> Answers(const std::vector<int64_t>& ids) override;
  Status Forget(const std::vector<int64_t>& ids) override;

 private:
  // The connection, opened (and LISTENing) if it is not.
  Result<Connection*> Ready();
  Result<Rows> Exec(const std::string& sql, const std::vector<std::optional<std::string>>& params,
                    const char* what);

  std::string url_;
  Connection::Options options_;
  std::string instance_;
  Duration lease_;
  std::optional<Connection> conn_;
  int wake_[2] = {-1, -1};  // a pipe: Wake() writes, Wait() polls the read end
};

}  // namespace baton::pg
