#include "server/auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <tuple>

namespace baton::server {
namespace {

constexpr TimeMs kCacheMs = 5'000;  // how long a lookup is trusted without the store
constexpr const char* kPrefix = "bt_";
constexpr const char* kSessionPrefix = "bs_";  // a dashboard session's secret
constexpr size_t kSecretHexDigits = 40;

std::string Hex(const unsigned char* p, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[p[i] >> 4];
    out[2 * i + 1] = kDigits[p[i] & 15];
  }
  return out;
}

Status Unauthorized() {
  return Status("UNAUTHORIZED", "a valid bearer token is required (Authorization: Bearer bt_...)");
}

// Fetched once: with EVP_sha256() every EVP_Digest looks the algorithm up again in
// OpenSSL 3's provider tables (a lock and a property query), on each request's token.
const EVP_MD* Sha256() {
  static EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return fetched != nullptr ? fetched : EVP_sha256();
}

}  // namespace

const char* ToString(Scope s) {
  switch (s) {
    case Scope::kPublic:
      return "public";
    case Scope::kRead:
      return "read";
    case Scope::kWrite:
      return "write";
    case Scope::kAdmin:
      return "admin";
    case Scope::kWorker:
      return "worker";
  }
  return "?";
}

std::optional<Scope> ParseScope(std::string_view s) {
  for (Scope x : {Scope::kRead, Scope::kWrite, Scope::kAdmin, Scope::kWorker}) {
    if (s == ToString(x)) return x;
  }
  return std::nullopt;
}

bool Principal::Has(Scope needed) const {
  if (needed == Scope::kPublic) return true;
  for (Scope s : scopes) {
    if (s == needed || s == Scope::kAdmin) return true;
    if (s == Scope::kWrite && needed == Scope::kRead) return true;
  }
  return false;
}

bool Principal::MayAdminister(const std::string& other) const {
  return Has(Scope::kAdmin) && (other == ns || ns == kDefaultNamespace);
}

std::string Sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, Sha256(), nullptr);
  return Hex(md.data(), len);
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  HMAC(Sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md.data(), &len);
  return Hex(md.data(), len);
}

std::string RandomHex(size_t n) {
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(bytes.data() + got, n - got, 0);
    if (r > 0) got += static_cast<size_t>(r);  // EINTR: try again
  }
  return Hex(reinterpret_cast<const unsigned char*>(bytes.data()), n);
}

bool SafeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Result<Principal> TokenAuthority::Authenticate(std::string_view header) {
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), header.begin(),
                  [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
    return Unauthorized();
  }
  std::string_view secret = header.substr(kBearer.size());
  if (secret.size() != 3 + kSecretHexDigits || secret.substr(0, 3) != kPrefix) {
    return Unauthorized();
  }
  return AuthenticateHash(Sha256Hex(secret));
}

Result<Principal> TokenAuthority::AuthenticateHash(const std::string& hash) {
  const TimeMs now = clock_->Now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(hash);
    if (it != cache_.end() && now - it->second.checked_at < kCacheMs) return it->second.principal;
  }
  Result<TokenRecord> token = store_->FindToken(hash);
  if (!token.ok()) {
    if (token.status().code() == errc::kNotFound) return Unauthorized();
    return token.status();  // the store is down: 503, not 401
  }
  if (token->revoked_at != 0) return Unauthorized();
  Principal p;
  p.token_id = token->id;
  p.ns = token->ns;
  for (const std::string& s : token->scopes) {
    if (auto scope = ParseScope(s)) p.scopes.push_back(*scope);
  }
  std::lock_guard lock(mu_);
  if (cache_.size() > 10'000) cache_.clear();  // bounded: many distinct tokens in 5 s
  cache_[hash] = {p, now};
  return p;
}

Result<TokenAuthority::Issued> TokenAuthority::Create(const std::string& ns,
                                                      const std::string& name,
                                                      const std::vector<Scope>& scopes) {
  if (scopes.empty()) return Status(errc::kValidation, "a token needs at least one scope");
  Issued out;
  out.secret = kPrefix + RandomHex(kSecretHexDigits / 2);
  out.record.id = "tok_" + RandomHex(6);
  out.record.ns = ns;
  out.record.name = name;
  for (Scope s : scopes) out.record.scopes.push_back(ToString(s));
  out.record.secret_hash = Sha256Hex(out.secret);
  out.record.created_at = clock_->Now();
  WriteBatch b;
  b.tokens.push_back(out.record);
  if (Status s = store_->Commit(b); !s.ok()) return s;
  return out;
}

Status TokenAuthority::Revoke(const Principal& caller, const std::string& id) {
  auto tokens = store_->ListTokens("");
  if (!tokens.ok()) return tokens.status();
  for (TokenRecord& t : *tokens) {
    if (t.id != id || !caller.MayAdminister(t.ns)) continue;
    if (t.revoked_at == 0) {
      t.revoked_at = clock_->Now();
      WriteBatch b;
      b.tokens.push_back(t);
      if (Status s = store_->Commit(b); !s.ok()) return s;
    }
    std::lock_guard lock(mu_);
    cache_.erase(t.secret_hash);
    return Status::Ok();
  }
  return Status(errc::kNotFound, "no token '" + id + "'");
}

Result<std::optional<TokenAuthority::Issued>> TokenAuthority::EnsureAdmin() {
  auto tokens = store_->ListTokens("");
  if (!tokens.ok()) return tokens.status();
  if (!tokens->empty()) return std::optional<Issued>();
  auto issued = Create(kDefaultNamespace, "initial admin", {Scope::kAdmin});
  if (!issued.ok()) return issued.status();
  return std::optional<Issued>(std::move(*issued));
}

std::string TokenAuthority::SessionSecret(std::string_view cookie_header) {
  // "a=1; baton_session=bs_...; b=2": the first cookie of that name.
  const std::string name = std::string(kSessionCookie) + "=";
  size_t at = 0;
  while (at < cookie_header.size()) {
    while (at < cookie_header.size() && (cookie_header[at] == ' ' || cookie_header[at] == ';')) {
      ++at;
    }
    size_t end = cookie_header.find(';', at);
    if (end == std::string_view::npos) end = cookie_header.size();
    std::string_view pair = cookie_header.substr(at, end - at);
    if (pair.substr(0, name.size()) == name) return std::string(pair.substr(name.size()));
    at = end;
  }
  return "";
}

Result<TokenAuthority::OpenedSession> TokenAuthority::OpenSession(std::string_view token_secret) {
  Result<Principal> who = Authenticate("Bearer " + std::string(token_secret));
  if (!who.ok()) return who.status();
  OpenedSession out;
  out.principal = std::move(*who);
  out.secret = kSessionPrefix + RandomHex(kSecretHexDigits / 2);
  out.expires_at = clock_->Now() + kSessionMs;
  const TimeMs now = clock_->Now();
  const std::string token_hash = Sha256Hex(token_secret);
  std::lock_guard lock(mu_);
  // The token's own sessions first: its oldest (closest to its end) makes room.
  auto oldest = sessions_.end();
  size_t mine = 0;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.token_hash != token_hash) continue;
    ++mine;
    if (oldest == sessions_.end() ||
        std::tie(it->second.expires_at, it->second.opened) <
            std::tie(oldest->second.expires_at, oldest->second.opened)) {
      oldest = it;
    }
  }
  if (mine >= kMaxSessionsPerToken) sessions_.erase(oldest);
  if (sessions_.size() >= kMaxSessions) {
    std::erase_if(sessions_, [now](const auto& kv) { return kv.second.expires_at <= now; });
  }
  if (sessions_.size() >= kMaxSessions) {
    auto soonest = std::min_element(
        sessions_.begin(), sessions_.end(),
        [](const auto& a, const auto& b) { return a.second.expires_at < b.second.expires_at; });
    sessions_.erase(soonest);
  }
  sessions_[Sha256Hex(out.secret)] = {token_hash, out.expires_at, ++sessions_opened_};
  return out;
}

Result<Principal> TokenAuthority::AuthenticateSession(std::string_view cookie_header) {
  const std::string secret = SessionSecret(cookie_header);
  if (secret.size() != 3 + kSecretHexDigits || secret.substr(0, 3) != kSessionPrefix) {
    return Unauthorized();
  }
  std::string token_hash;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(Sha256Hex(secret));
    if (it == sessions_.end()) return Unauthorized();
    if (it->second.expires_at <= clock_->Now()) {
      sessions_.erase(it);
      return Unauthorized();
    }
    token_hash = it->second.token_hash;
  }
  return AuthenticateHash(token_hash);
}

void TokenAuthority::CloseSession(std::string_view cookie_header) {
  const std::string secret = SessionSecret(cookie_header);
  if (secret.empty()) return;
  std::lock_guard lock(mu_);
  sessions_.erase(Sha256Hex(secret));
}

}  // namespace baton::server
