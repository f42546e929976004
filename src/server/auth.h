// Bearer tokens: scopes, namespaces, and the first admin token.
//
// A token is "bt_" + 40 hex digits of randomness. Only its SHA-256 is stored, so a
// leaked database does not leak usable tokens. Scopes nest: admin > write > read;
// `worker` is separate (the worker protocol) and admin holds it too.
//
// Namespaces: every token belongs to one. Admins of the `default` namespace operate the
// server and may create tokens for any namespace; admins of another namespace manage
// that namespace's tokens only.
//
// Threading: thread-safe. Lookups are cached for a few seconds; revocations through this
// object take effect at once.
#pragma once

#include <baton/clock.h>
#include <baton/status.h>
#include <baton/store.h>

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace baton::server {

enum class Scope { kPublic, kRead, kWrite, kAdmin, kWorker };

const char* ToString(Scope s);
std::optional<Scope> ParseScope(std::string_view s);

struct Principal {
  std::string token_id;
  std::string ns;
  std::vector<Scope> scopes;
  bool Has(Scope needed) const;
  // May act on namespace `other` (its own, or any for an admin of the default one).
  bool MayAdminister(const std::string& other) const;
};

// Hex SHA-256.
std::string Sha256Hex(std::string_view data);
// Hex HMAC-SHA256 of `data` under `key`.
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// `n` random bytes from the kernel, as hex.
std::string RandomHex(size_t n);
// Constant-time comparison (signatures, secrets).
bool SafeEqual(std::string_view a, std::string_view b);

class TokenAuthority {
 public:
  TokenAuthority(Store* store, const Clock* clock) : store_(store), clock_(clock) {}

  // The token in an "Authorization: Bearer ..." value. UNAUTHORIZED when missing,
  // malformed, unknown or revoked (one message for all: no oracle for guessing).
  Result<Principal> Authenticate(std::string_view authorization_header);

  struct Issued {
    TokenRecord record;
    std::string secret;  // shown once; only its hash is stored
  };
  Result<Issued> Create(const std::string& ns, const std::string& name,
                        const std::vector<Scope>& scopes);
  // NOT_FOUND when no token `id` is visible to `caller`.
  Status Revoke(const Principal& caller, const std::string& id);
  // The first start: when the store holds no token at all, creates an admin token of the
  // default namespace and returns it; otherwise nullopt.
  Result<std::optional<Issued>> EnsureAdmin();

  // Dashboard sessions: a token exchanged for a session whose secret travels in an
  // HttpOnly cookie (kSessionCookie), so that the browser's script never holds a token.
  // A session acts as its token, which is checked at each use (a revoked token ends its
  // sessions); it lasts kSessionMs, lives in this process's memory (a restart, or another
  // instance, asks for the token again), and only its secret's hash is kept. At most
  // kMaxSessionsPerToken per token (past that, the token's oldest is dropped: one token
  // logging in again and again cannot push other people's sessions out) and kMaxSessions
  // in all (past that, the session closest to its end is dropped).
  static constexpr const char* kSessionCookie = "baton_session";
  static constexpr TimeMs kSessionMs = 12LL * 3600 * 1000;
  static constexpr size_t kMaxSessions = 10'000;
  static constexpr size_t kMaxSessionsPerToken = 100;
  struct OpenedSession {
    Principal principal;
    std::string secret;  // the cookie's value
    TimeMs expires_at = 0;
  };
  // UNAUTHORIZED as Authenticate() for a bad token.
  Result<OpenedSession> OpenSession(std::string_view token_secret);
  // The session named in a "Cookie:" header value. UNAUTHORIZED when it names none, or an
  // unknown, expired or closed one.
  Result<Principal> AuthenticateSession(std::string_view cookie_header);
  // Ends the session named in a "Cookie:" header value (nothing when it names none).
  void CloseSession(std::string_view cookie_header);
  // The session secret in a "Cookie:" header value; empty when there is none.
  static std::string SessionSecret(std::string_view cookie_header);

 private:
  struct Cached {
    Principal principal;
    TimeMs checked_at;
  };
  struct Session {
    std::string token_hash;
    TimeMs expires_at;
    uint64_t opened = 0;  // sessions_opened_ when it opened: orders those of one millisecond
  };
  // Authenticate() once the token's secret is hashed.
  Result<Principal> AuthenticateHash(const std::string& hash);
  Store* store_;
  const Clock* clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Cached> cache_;      // by secret hash
  std::unordered_map<std::string, Session> sessions_;  // by session secret hash
  uint64_t sessions_opened_ = 0;
};

}  // namespace baton::server
