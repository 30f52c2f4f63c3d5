#include "redis/url.h"

#include <cctype>
#include <charconv>
#include <string>

namespace warmpool {
namespace {

bool ParseInt(std::string_view text, int min, int max, int* out) {
  if (text.empty()) return false;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

std::string PercentDecode(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      int v = 0;
      auto [p, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, v, 16);
      if (ec == std::errc() && p == in.data() + i + 3) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(in[i]);
  }
  return out;
}

// Everything but unreserved characters as %XX, so Redacted() output parses back.
std::string PercentEncode(std::string_view in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Lower(std::string_view in) {
  std::string out(in);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// host[:port][/db]; IPv6 as [::1]:6379.
bool ParseHostPortDb(std::string_view rest, RedisEndpoint* ep, std::string* error) {
  std::string_view hostport = rest;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !ParseInt(db, 0, 65535, &ep->db)) {
      *error = "database index '" + std::string(db) + "' is not a non-negative integer";
      return false;
    }
  }
  std::string_view host = hostport;
  std::string_view port;
  if (!hostport.empty() && hostport.front() == '[') {
    auto close = hostport.find(']');
    if (close == std::string_view::npos) {
      *error = "unterminated IPv6 address";
      return false;
    }
    host = hostport.substr(1, close - 1);
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        *error = "expected ':' after IPv6 address";
        return false;
      }
      port = after.substr(1);
    }
  } else if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (host.empty()) {
    *error = "missing host";
    return false;
  }
  // Unbracketed, a ':' is ambiguous (IPv6 needs [::1]) and "user:password:port" with a missing
  // '@' would make the password part of the host that Redacted() prints. The host is not echoed.
  if (host.find_first_of("[];") != std::string_view::npos ||
      (hostport.front() != '[' && host.find(':') != std::string_view::npos)) {
    *error = "host must be a name, an IPv4 address or [IPv6] (is an '@' missing?)";
    return false;
  }
  ep->host = std::string(host);
  if (!port.empty() && !ParseInt(port, 1, 65535, &ep->port)) {
    *error = "port '" + std::string(port) + "' is not in 1..65535";
    return false;
  }
  return true;
}

// "[[user]:pass@]host[:port][/db]" after the scheme, without the query.
bool ParseAuthority(std::string_view rest, RedisEndpoint* ep, std::string* error) {
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      ep->username = PercentDecode(userinfo.substr(0, colon));
      ep->password = PercentDecode(userinfo.substr(colon + 1));
    } else {
      // "redis://secret@host" is how redis-py reads a bare password.
      ep->password = PercentDecode(userinfo);
    }
  }
  return ParseHostPortDb(rest, ep, error);
}

bool ParseBool(std::string_view text, bool* out) {
  const std::string v = Lower(text);
  if (v == "true" || v == "1" || v == "yes" || v == "on") {
    *out = true;
  } else if (v == "false" || v == "0" || v == "no" || v == "off") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// One "key=value" of the query. Only the keys warmpool acts on are checked; the rest are kombu
// or redis-py options (socket_timeout, ...) that mean nothing here and are ignored.
bool ApplyQueryParam(std::string_view key, std::string value, std::string_view scheme,
                     RedisEndpoint* ep, std::string* error) {
  if (key == "master_name") {
    if (scheme != "sentinel") {
      *error = "master_name is only for sentinel:// URLs";
      return false;
    }
    ep->master_name = std::move(value);
    return true;
  }
  if (!key.starts_with("ssl_")) return true;
  if (scheme != "rediss") {
    // Celery refuses ssl_* on redis:// too (E_REDIS_SSL_PARAMS_AND_SCHEME_MISMATCH).
    *error = std::string(key) + " needs a rediss:// URL";
    if (scheme == "sentinel") *error = std::string(key) + ": TLS through Sentinel is not supported";
    return false;
  }
  RedisTlsOptions& tls = ep->tls;
  if (key == "ssl_cert_reqs") {
    const std::string v = Lower(value);
    if (v == "cert_required" || v == "required") {
      tls.verify = TlsVerify::kRequired;
    } else if (v == "cert_optional" || v == "optional") {
      tls.verify = TlsVerify::kOptional;
    } else if (v == "cert_none" || v == "none") {
      tls.verify = TlsVerify::kNone;
    } else {
      *error = "ssl_cert_reqs must be required, optional or none (or CERT_REQUIRED, ...)";
      return false;
    }
  } else if (key == "ssl_ca_certs") {
    tls.ca_file = std::move(value);
  } else if (key == "ssl_certfile") {
    tls.cert_file = std::move(value);
  } else if (key == "ssl_keyfile") {
    tls.key_file = std::move(value);
  } else if (key == "ssl_check_hostname") {
    if (!ParseBool(value, &tls.check_hostname)) {
      *error = "ssl_check_hostname must be true or false";
      return false;
    }
  } else {
    *error = "unknown TLS parameter '" + std::string(key).substr(0, 40) +
             "' (known: ssl_cert_reqs, ssl_ca_certs, ssl_certfile, ssl_keyfile, "
             "ssl_check_hostname)";
    return false;
  }
  return true;
}

bool ParseQuery(std::string_view query, std::string_view scheme, RedisEndpoint* ep,
                std::string* error) {
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view item = query.substr(start, amp - start);
    start = amp + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    std::string value = eq == std::string_view::npos ? "" : PercentDecode(item.substr(eq + 1));
    if (!ApplyQueryParam(key, std::move(value), scheme, ep, error)) return false;
  }
  return true;
}

// "scheme://" at the start (RFC 3986 scheme characters), lower-cased; "" when there is none.
std::string SchemeOf(std::string_view url) {
  size_t i = 0;
  while (i < url.size() && (std::isalnum(static_cast<unsigned char>(url[i])) || url[i] == '+' ||
                            url[i] == '-' || url[i] == '.')) {
    ++i;
  }
  if (i == 0 || !std::isalpha(static_cast<unsigned char>(url[0]))) return "";
  if (url.substr(i).starts_with("://")) return Lower(url.substr(0, i));
  return "";
}

// Splits "authority?query": the query starts at the first '?' (as urllib's urlsplit; a '?' in a
// password must be percent-encoded).
std::pair<std::string_view, std::string_view> SplitQuery(std::string_view rest) {
  const size_t q = rest.find('?');
  if (q == std::string_view::npos) return {rest, {}};
  return {rest.substr(0, q), rest.substr(q + 1)};
}

// "sentinel://[cred@]h1[:p][/db][?q];sentinel://h2[:p]...": credentials and db from the first
// part, as Celery's SentinelBackend and kombu's SentinelChannel take them.
constexpr int kNoDb = -1;  // a part without "/db"

std::optional<RedisEndpoint> ParseSentinelUrl(std::string_view url, std::string* error) {
  constexpr std::string_view kScheme = "sentinel://";
  RedisEndpoint ep;
  size_t start = 0;
  while (start <= url.size()) {
    size_t semi = url.find(';', start);
    if (semi == std::string_view::npos) semi = url.size();
    std::string_view part = url.substr(start, semi - start);
    start = semi + 1;
    if (part.empty()) continue;
    if (Lower(part.substr(0, kScheme.size())) != kScheme) {
      *error = "each ';'-separated part must be sentinel://host[:port]";
      return std::nullopt;
    }
    part.remove_prefix(kScheme.size());
    auto [authority, query] = SplitQuery(part);
    RedisEndpoint one;
    one.port = 26379;
    one.db = kNoDb;
    if (!ParseAuthority(authority, &one, error)) return std::nullopt;
    // Celery and kombu use the first part's database; one elsewhere would be silently ignored.
    if (!ep.sentinels.empty() && one.db != kNoDb && one.db != ep.db) {
      *error = "sentinel:// parts name different databases (give the index on the first part)";
      return std::nullopt;
    }
    if (ep.sentinels.empty()) {
      ep.username = one.username;
      ep.password = one.password;
      ep.db = one.db == kNoDb ? 0 : one.db;
      ep.host = one.host;
      ep.port = one.port;
    }
    ep.sentinels.push_back({one.host, one.port});
    if (!ParseQuery(query, "sentinel", &ep, error)) return std::nullopt;
  }
  if (ep.sentinels.empty()) {
    *error = "no sentinel address";
    return std::nullopt;
  }
  return ep;
}

void AppendHostPort(const std::string& host, int port, std::string* out) {
  // Appended piece by piece: GCC 12 -O3 misreads `":" + std::to_string(port)` as an overlapping
  // copy (-Werror=restrict, a GCC 12 false positive).
  if (host.find(':') != std::string::npos) {
    out->append("[").append(host).append("]");
  } else {
    out->append(host);
  }
  out->append(":").append(std::to_string(port));
}

}  // namespace

std::string RedisEndpoint::Redacted() const {
  std::string out = uses_sentinel() ? "sentinel://" : tls.enabled ? "rediss://" : "redis://";
  if (!username.empty() || !password.empty()) {
    out += PercentEncode(username);  // a '?' or '/' in it must not end the authority
    if (!password.empty()) out += ":***";
    out += "@";
  }
  if (!uses_sentinel()) {
    AppendHostPort(host, port, &out);
    out.append("/").append(std::to_string(db));
    return out;
  }
  for (size_t i = 0; i < sentinels.size(); ++i) {
    if (i > 0) out.append(";sentinel://");
    AppendHostPort(sentinels[i].host, sentinels[i].port, &out);
    if (i == 0) out.append("/").append(std::to_string(db));
  }
  if (!master_name.empty()) out.append("?master_name=").append(PercentEncode(master_name));
  return out;
}

std::optional<RedisEndpoint> ParseRedisUrl(std::string_view url, std::string* error) {
  const std::string scheme = SchemeOf(url);
  if (scheme == "sentinel") return ParseSentinelUrl(url, error);
  if (!scheme.empty() && scheme != "redis" && scheme != "rediss") {
    *error = "unsupported scheme '" + scheme.substr(0, 20) +
             "' (use redis://, rediss:// or sentinel://)";
    return std::nullopt;
  }
  std::string_view rest = url;
  if (!scheme.empty()) rest.remove_prefix(scheme.size() + 3);
  RedisEndpoint ep;
  ep.tls.enabled = scheme == "rediss";
  if (ep.tls.enabled) ep.port = 6379;  // redis-py's default for rediss:// too
  auto [authority, query] = SplitQuery(rest);
  if (!ParseAuthority(authority, &ep, error)) return std::nullopt;
  if (!ParseQuery(query, scheme.empty() ? "redis" : scheme, &ep, error)) return std::nullopt;
  if (ep.tls.key_file.empty()) ep.tls.key_file = ep.tls.cert_file;
  return ep;
}

Status ApplyDefaultMasterName(const std::string& master_name, std::string_view what,
                              RedisEndpoint* endpoint) {
  if (!endpoint->uses_sentinel()) return Status::Ok();
  if (endpoint->master_name.empty()) endpoint->master_name = master_name;
  if (endpoint->master_name.empty()) {
    return Status::InvalidArgument(std::string(what) +
                                   ": a sentinel:// URL needs the master's name: add "
                                   "?master_name=NAME or --redis-master-name NAME");
  }
  return Status::Ok();
}

std::optional<RedisEndpoint> ParseRedisAddress(std::string_view address, std::string* error) {
  if (address.find('@') != std::string_view::npos ||
      address.find("://") != std::string_view::npos) {
    *error = "must be host:port[/db] without scheme or credentials";
    return std::nullopt;
  }
  RedisEndpoint ep;
  if (!ParseHostPortDb(address, &ep, error)) return std::nullopt;
  return ep;
}

}  // namespace warmpool
