#include "redis/sentinel.h"

#include <hiredis/hiredis.h>

#include "redis/connection.h"
#include "redis/errors.h"

namespace warmpool {

RedisHostPort ResolveSentinelMaster(const RedisEndpoint& endpoint) {
  std::string failures;
  for (const RedisHostPort& sentinel : endpoint.sentinels) {
    RedisEndpoint one;
    one.host = sentinel.host;
    one.port = sentinel.port;
    one.connect_timeout = endpoint.connect_timeout;
    // A connection that blocks forever (timeout 0, e.g. pub/sub) still asks with a deadline.
    one.command_timeout =
        endpoint.command_timeout.count() > 0 ? endpoint.command_timeout : endpoint.connect_timeout;
    std::string failure;
    try {
      RedisConnection conn(one);
      RedisReplyPtr reply =
          conn.Command({"SENTINEL", "get-master-addr-by-name", endpoint.master_name});
      if (!ReplyIsNil(reply.get())) {
        const auto parts = ReplyElements(reply.get());
        int port = 0;
        if (parts.size() == 2) port = std::atoi(ReplyString(parts[1]).c_str());
        if (port > 0 && port <= 65535) return {ReplyString(parts[0]), port};
        failure = "malformed answer";
      } else {
        failure = "does not know master '" + endpoint.master_name + "'";
      }
    } catch (const RedisError& e) {
      failure = e.what();
    }
    if (!failures.empty()) failures += "; ";
    failures.append(sentinel.host).append(":").append(std::to_string(sentinel.port));
    failures.append(": ").append(failure);
  }
  throw RedisIoError("redis " + endpoint.Redacted() + ": no Sentinel gave the address of master '" +
                     endpoint.master_name + "' (" + failures + ")");
}

}  // namespace warmpool
