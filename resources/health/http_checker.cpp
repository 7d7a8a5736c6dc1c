#include "health/http_checker.h"

#include <curl/curl.h>
#include <regex.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "health/reasons.h"

namespace tandem::resources::health {

namespace {

// libcurl's global state (and OpenSSL's, which it sets up) is made once, before the first
// handle. tandemd is single-threaded, so a function-local static is enough.
bool curlReady() {
  static const bool ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ready;
}

// "200-399", "200, 301-302"
std::string rangesText(const std::vector<config::StatusRange>& ranges) {
  std::string out;
  for (const auto& r : ranges) {
    if (!out.empty()) out += ", ";
    out += std::to_string(r.low);
    if (r.high != r.low) out += "-" + std::to_string(r.high);
  }
  return out;
}

bool statusExpected(long status, const std::vector<config::StatusRange>& ranges) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [status](const auto& r) { return status >= r.low && status <= r.high; });
}

bool isTlsError(CURLcode code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct HttpChecker::Curl {
  CURLM* multi = nullptr;  // for the checker's life
  CURL* easy = nullptr;    // the running probe's
  curl_slist* connect_to = nullptr;
  char error[CURL_ERROR_SIZE] = {};
};

// expect_body_regex, compiled once per pattern (the loader has checked that it compiles).
struct HttpChecker::BodyRegex {
  explicit BodyRegex(const std::string& p) : pattern(p) {
    ok = regcomp(&re, p.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
  }
  ~BodyRegex() {
    if (ok) regfree(&re);
  }
  BodyRegex(const BodyRegex&) = delete;
  BodyRegex& operator=(const BodyRegex&) = delete;
  // The whole body, NULs and all (REG_STARTEND), not only up to its first NUL.
  bool matches(const std::string& body) const {
    if (!ok) return false;
    regmatch_t range[1];
    range[0].rm_so = 0;
    range[0].rm_eo = static_cast<regoff_t>(body.size());
    return regexec(&re, body.c_str(), 1, range, REG_STARTEND) == 0;
  }
  std::string pattern;
  regex_t re{};
  bool ok = false;
};

HttpChecker::HttpChecker(loop::Dispatcher& dispatcher)
    : dispatcher_(dispatcher), curl_(std::make_unique<Curl>()) {
  timer_ = dispatcher_.createTimer([this] {
    if (early_) {
      std::string reason = std::move(*early_);
      early_.reset();
      finish(false, std::move(reason));
      return;
    }
    drive(CURL_SOCKET_TIMEOUT, 0);
  });
  if (!curlReady()) return;
  curl_->multi = curl_multi_init();
  if (curl_->multi == nullptr) return;
  // curl calls these from inside curl_multi_socket_action and friends; they only record what
  // curl wants, and never call back into curl (which it forbids).
  auto on_socket = [](CURL*, curl_socket_t fd, int what, void* self, void*) -> int {
    static_cast<HttpChecker*>(self)->watchSocket(fd, what);
    return 0;
  };
  auto on_timer = [](CURLM*, long timeout_ms, void* self) -> int {
    auto& timer = *static_cast<HttpChecker*>(self)->timer_;
    if (timeout_ms < 0) {
      timer.cancel();
    } else {
      timer.arm(Millis(timeout_ms));  // 0: as soon as the loop comes round, not from in here
    }
    return 0;
  };
  curl_multi_setopt(curl_->multi, CURLMOPT_SOCKETFUNCTION,
                    static_cast<curl_socket_callback>(on_socket));
  curl_multi_setopt(curl_->multi, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(curl_->multi, CURLMOPT_TIMERFUNCTION,
                    static_cast<curl_multi_timer_callback>(on_timer));
  curl_multi_setopt(curl_->multi, CURLMOPT_TIMERDATA, this);
}

HttpChecker::~HttpChecker() {
  done_ = nullptr;
  endTransfer();
  // curl may still report sockets and its timer while it cleans up: both are alive here.
  if (curl_->multi != nullptr) curl_multi_cleanup(curl_->multi);
  watches_.clear();
}

void HttpChecker::probe(const ProbeTarget& target, ProbeDone done) {
  cancel();
  done_ = std::move(done);
  check_ = target.check;
  started_ = dispatcher_.now();
  body_.clear();
  body_bytes_ = 0;
  too_large_ = false;
  watch_error_.clear();
  auto at_once = [this](std::string reason) {
    early_ = std::move(reason);
    timer_->arm(Millis(0));
  };
  if (curl_->multi == nullptr) return at_once("cannot start libcurl");
  CURL* easy = curl_easy_init();
  if (easy == nullptr) return at_once("cannot start libcurl");

  const bool tls = check_.type == config::CheckType::kHttps;
  const std::string address = target.address.toString();  // "[::1]:8443" for IPv6
  std::string url = tls ? "https://" : "http://";
  if (check_.host.empty()) {
    url += address;
  } else {
    // The URL names the host (Host header, SNI, the certificate's name); CONNECT_TO sends
    // the connection to the real server whatever the name would resolve to. Its empty host
    // and port match any, so a host that is itself an address works alike.
    const bool v6 = check_.host.find(':') != std::string::npos && check_.host.front() != '[';
    url += (v6 ? "[" + check_.host + "]" : check_.host) + ":" + std::to_string(target.address.port);
    curl_->connect_to = curl_slist_append(nullptr, ("::" + address).c_str());
  }
  url += check_.path;

  curl_->error[0] = '\0';
  CURLcode rc = CURLE_OK;
  auto set = [&rc, easy](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, option, value);
  };
  set(CURLOPT_URL, url.c_str());  // curl copies strings
  set(CURLOPT_PROTOCOLS_STR, tls ? "https" : "http");
  set(CURLOPT_ERRORBUFFER, curl_->error);
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_PROXY, "");  // never through a proxy from the environment
  set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  set(CURLOPT_FORBID_REUSE, 1L);
  set(CURLOPT_FRESH_CONNECT, 1L);
  set(CURLOPT_PATH_AS_IS, 1L);  // the path as configured, "/../" and all
  set(CURLOPT_USERAGENT, "tandem-health-check");
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(check_.timeout.count()));
  set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(check_.timeout.count()));
  if (curl_->connect_to != nullptr) set(CURLOPT_CONNECT_TO, curl_->connect_to);
  std::string source;
  if (check_.source_address) {
    // "host!": an address to bind to, never an interface name to look up.
    source = "host!" + check_.source_address->toString();
    set(CURLOPT_INTERFACE, source.c_str());
  }
  if (check_.expect_body_regex.empty()) {
    regex_.reset();
  } else if (!regex_ || regex_->pattern != check_.expect_body_regex) {
    regex_ = std::make_unique<BodyRegex>(check_.expect_body_regex);
  }
  if (check_.method == config::HttpMethod::kHead) {
    set(CURLOPT_NOBODY, 1L);
  } else {
    // A declared length over the limit fails before a byte of the body is read. Not for
    // HEAD, whose Content-Length describes a body that is never sent.
    set(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(check_.max_response));
  }
  // curl's own sockets lack close-on-exec: a child started meanwhile (an exec check, a notify
  // command) would hold a probe's connection open.
  auto open_socket = [](void*, curlsocktype, curl_sockaddr* a) -> curl_socket_t {
    return ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  };
  set(CURLOPT_OPENSOCKETFUNCTION, static_cast<curl_opensocket_callback>(open_socket));
  auto on_body = [](char* data, size_t size, size_t n, void* self) -> size_t {
    return static_cast<HttpChecker*>(self)->takeBody(data, size * n);
  };
  set(CURLOPT_WRITEFUNCTION, static_cast<curl_write_callback>(on_body));
  set(CURLOPT_WRITEDATA, this);
  if (tls) {
    set(CURLOPT_SSL_VERIFYPEER, check_.tls_verify ? 1L : 0L);
    set(CURLOPT_SSL_VERIFYHOST, check_.tls_verify ? 2L : 0L);
    if (check_.tls_verify && !check_.ca_file.empty()) {
      set(CURLOPT_CAINFO, check_.ca_file.c_str());
      // Only the named CAs: the system's directory would trust the public ones too.
      set(CURLOPT_CAPATH, static_cast<const char*>(nullptr));
    }
  }
  if (rc != CURLE_OK) {
    curl_easy_cleanup(easy);
    endTransfer();
    return at_once(std::string("cannot set up the request: ") + curl_easy_strerror(rc));
  }
  // Adding only arms curl's timer (at 0 ms): the transfer starts from the loop.
  if (CURLMcode mc = curl_multi_add_handle(curl_->multi, easy); mc != CURLM_OK) {
    curl_easy_cleanup(easy);
    endTransfer();
    return at_once(std::string("cannot start the request: ") + curl_multi_strerror(mc));
  }
  curl_->easy = easy;
}

void HttpChecker::cancel() {
  done_ = nullptr;
  early_.reset();
  endTransfer();
  timer_->cancel();
}

void HttpChecker::watchSocket(int fd, int what) {
  if (what == CURL_POLL_REMOVE) {
    watches_.erase(fd);  // curl closes the socket after this
    return;
  }
  loop::FdEvents interest{what == CURL_POLL_IN || what == CURL_POLL_INOUT,
                          what == CURL_POLL_OUT || what == CURL_POLL_INOUT};
  if (auto it = watches_.find(fd); it != watches_.end()) {
    it->second->setInterest(interest);
    return;
  }
  auto watch = dispatcher_.watchFd(fd, interest, [this, fd](loop::FdEvents ready) {
    drive(fd, (ready.readable ? CURL_CSELECT_IN : 0) | (ready.writable ? CURL_CSELECT_OUT : 0));
  });
  if (!watch) {
    watch_error_ = "cannot watch the socket: " + watch.error().message;
    return;
  }
  watches_.emplace(fd, std::move(*watch));
}

void HttpChecker::drive(int fd, int ready) {
  if (curl_->multi == nullptr) return;
  int running = 0;
  (void)curl_multi_socket_action(curl_->multi, fd, ready, &running);
  if (curl_->easy == nullptr) return;
  int queued = 0;
  while (CURLMsg* m = curl_multi_info_read(curl_->multi, &queued)) {
    if (m->msg != CURLMSG_DONE || m->easy_handle != curl_->easy) continue;
    ProbeResult r = judge(m->data.result);  // m is freed when the handle is removed
    return finish(r.ok, std::move(r.reason));
  }
  if (!watch_error_.empty()) finish(false, watch_error_);
}

size_t HttpChecker::takeBody(const char* data, size_t len) {
  if (len > check_.max_response - body_bytes_) {
    too_large_ = true;
    return 0;  // short of len: curl stops reading and fails the transfer
  }
  body_bytes_ += len;
  if (!check_.expect_body.empty() || regex_) body_.append(data, len);
  return len;
}

ProbeResult HttpChecker::judge(int result) const {
  const auto code = static_cast<CURLcode>(result);
  CURL* easy = curl_->easy;
  if (too_large_ || code == CURLE_FILESIZE_EXCEEDED) {
    return {false, "response larger than " + std::to_string(check_.max_response) + " bytes"};
  }
  if (code == CURLE_OK) {
    long status = 0;
    (void)curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    const std::string http = "HTTP " + std::to_string(status);
    if (!statusExpected(status, check_.expect_status)) {
      return {false, http + " not in " + rangesText(check_.expect_status)};
    }
    if (!check_.expect_body.empty() && body_.find(check_.expect_body) == std::string::npos) {
      return {false, "body does not contain \"" + check_.expect_body + "\""};
    }
    if (regex_ && !regex_->matches(body_)) {
      return {false, "body does not match /" + check_.expect_body_regex + "/"};
    }
    return {true, http};
  }
  std::string text = curl_->error[0] != '\0' ? curl_->error : curl_easy_strerror(code);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return {false, timedOutReason(check_.timeout)};
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: {
      long err = 0;
      (void)curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &err);
      return {false, err != 0 ? errnoReason(static_cast<int>(err)) : text};
    }
    case CURLE_GOT_NOTHING:
      return {false, "closed without a reply"};
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:  // what an answer without a status line gets (HTTP/0.9)
      return {false, "not HTTP: " + text};
    default:
      return {false, isTlsError(code) ? "TLS: " + text : text};
  }
}

void HttpChecker::finish(bool ok, std::string reason) {
  endTransfer();
  timer_->cancel();
  ProbeDone done = std::move(done_);
  done_ = nullptr;
  const auto took = std::chrono::duration_cast<Millis>(dispatcher_.now() - started_);
  if (done) done(ProbeResult{ok, std::move(reason), took});
}

void HttpChecker::endTransfer() {
  if (curl_->easy != nullptr) {
    // Closes the probe's connection (no connection is kept for reuse), which reports its
    // socket removed and may move curl's timer.
    (void)curl_multi_remove_handle(curl_->multi, curl_->easy);
    curl_easy_cleanup(curl_->easy);
    curl_->easy = nullptr;
  }
  curl_slist_free_all(curl_->connect_to);
  curl_->connect_to = nullptr;
}

}  // namespace tandem::resources::health
