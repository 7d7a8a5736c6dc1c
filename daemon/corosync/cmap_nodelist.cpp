#include "corosync/cmap_nodelist.h"

#include <corosync/cmap.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "corosync/cs_error.h"

namespace tandem::corosync {

namespace {

// Closes the connection on every path out of a read.
class CmapConnection {
 public:
  [[nodiscard]] static Result<CmapConnection> open() {
    cmap_handle_t handle = 0;
    cs_error_t rc = cmap_initialize(&handle);
    if (rc != CS_OK) return fail(csError(rc, "cmap_initialize"));
    return CmapConnection(handle);
  }
  CmapConnection(CmapConnection&& other) noexcept
      : handle_(other.handle_), open_(std::exchange(other.open_, false)) {}
  CmapConnection& operator=(CmapConnection&&) = delete;
  CmapConnection(const CmapConnection&) = delete;
  CmapConnection& operator=(const CmapConnection&) = delete;
  ~CmapConnection() {
    if (open_) (void)cmap_finalize(handle_);
  }
  cmap_handle_t handle() const { return handle_; }

 private:
  explicit CmapConnection(cmap_handle_t handle) : handle_(handle), open_(true) {}
  cmap_handle_t handle_;
  bool open_;
};

template <typename T>
std::string numberText(const std::vector<char>& buf) {
  T v{};
  std::memcpy(&v, buf.data(), sizeof v);
  return std::to_string(v);
}

// Renders any cmap value as text, so the pure parser sees one kind of value: corosync stores
// nodeid as uint32 but a hand-edited key may arrive as a string.
Result<std::string> readAsText(cmap_handle_t handle, const std::string& key, size_t value_len) {
  std::vector<char> buf(std::max<size_t>(value_len, sizeof(uint64_t)) + 1, '\0');
  size_t len = buf.size();
  cmap_value_types_t type{};
  cs_error_t rc = cmap_get(handle, key.c_str(), buf.data(), &len, &type);
  if (rc != CS_OK) return fail(csError(rc, "cmap_get(" + key + ")"));
  switch (type) {
    case CMAP_VALUETYPE_INT8:
      return numberText<int8_t>(buf);
    case CMAP_VALUETYPE_UINT8:
      return numberText<uint8_t>(buf);
    case CMAP_VALUETYPE_INT16:
      return numberText<int16_t>(buf);
    case CMAP_VALUETYPE_UINT16:
      return numberText<uint16_t>(buf);
    case CMAP_VALUETYPE_INT32:
      return numberText<int32_t>(buf);
    case CMAP_VALUETYPE_UINT32:
      return numberText<uint32_t>(buf);
    case CMAP_VALUETYPE_INT64:
      return numberText<int64_t>(buf);
    case CMAP_VALUETYPE_UINT64:
      return numberText<uint64_t>(buf);
    case CMAP_VALUETYPE_STRING:
      return std::string(buf.data(), ::strnlen(buf.data(), len));
    case CMAP_VALUETYPE_FLOAT:
    case CMAP_VALUETYPE_DOUBLE:
    case CMAP_VALUETYPE_BINARY:
      break;
  }
  return fail(ErrorCode::kParse, "cmap key " + key + " has a type tandem does not read (" +
                                     std::to_string(static_cast<int>(type)) + ")");
}

Result<std::vector<NodelistEntry>> readNodelistOn(cmap_handle_t handle) {
  cmap_iter_handle_t iter = 0;
  cs_error_t rc = cmap_iter_init(handle, "nodelist.node.", &iter);
  if (rc != CS_OK) return fail(csError(rc, "cmap_iter_init(nodelist.node.)"));
  std::map<std::string, std::string> keys;
  Result<void> status;
  for (;;) {
    char key[CMAP_KEYNAME_MAXLEN + 1] = {};
    size_t value_len = 0;
    cmap_value_types_t type{};
    rc = cmap_iter_next(handle, iter, key, &value_len, &type);
    if (rc == CS_ERR_NO_SECTIONS) break;  // the end of the iteration, not a failure
    if (rc != CS_OK) {
      status = fail(csError(rc, "cmap_iter_next(nodelist.node.)"));
      break;
    }
    auto value = readAsText(handle, key, value_len);
    if (!value) {
      status = fail(value.error());
      break;
    }
    keys.emplace(key, std::move(*value));
  }
  (void)cmap_iter_finalize(handle, iter);
  if (!status) return fail(status.error());
  auto nodes = parseNodelist(keys);
  if (!nodes) return nodes;
  if (nodes->empty()) {
    return fail(ErrorCode::kNotFound, "corosync has no nodelist (nodelist.node.* is empty)");
  }
  return nodes;
}

Result<Millis> readMillis(cmap_handle_t handle, const char* key) {
  uint32_t v = 0;
  cs_error_t rc = cmap_get_uint32(handle, key, &v);
  if (rc != CS_OK) return fail(csError(rc, std::string("cmap_get_uint32(") + key + ")"));
  return Millis(v);
}

}  // namespace

Result<std::vector<NodelistEntry>> readNodelist() {
  auto conn = CmapConnection::open();
  if (!conn) return fail(conn.error());
  return readNodelistOn(conn->handle());
}

Result<Millis> readTotemToken() {
  auto conn = CmapConnection::open();
  if (!conn) return fail(conn.error());
  return readMillis(conn->handle(), "runtime.config.totem.token");
}

Result<CorosyncConfig> readCorosyncConfig() {
  auto conn = CmapConnection::open();
  if (!conn) return fail(conn.error());
  CorosyncConfig config;
  auto nodes = readNodelistOn(conn->handle());
  if (!nodes) return fail(nodes.error());
  config.nodes = std::move(*nodes);
  auto token = readMillis(conn->handle(), "runtime.config.totem.token");
  if (!token) return fail(token.error());
  config.token = *token;
  auto consensus = readMillis(conn->handle(), "runtime.config.totem.consensus");
  if (!consensus) return fail(consensus.error());
  config.consensus = *consensus;
  return config;
}

}  // namespace tandem::corosync
