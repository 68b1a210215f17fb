#include "core/metrics.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "core/config.h"

namespace lt::metrics_impl {
namespace {

struct Timer {
  int64_t count = 0;
  int64_t total_ns = 0;
  std::vector<int64_t> samples;  // the most recent 1024, for percentiles
};

struct Registry {
  std::mutex mu;
  std::map<std::string, int64_t> counters;
  std::map<std::string, Timer> timers;
  std::map<std::string, std::pair<int64_t, int64_t>> profile;  // step: (runs, ns)
};

Registry& reg() {
  static Registry* r = new Registry();  // outlives static destructors that may still count
  return *r;
}

std::string fmt_ms(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", ns / 1e6);
  return b;
}

}  // namespace

void add(const std::string& name, int64_t delta) {
  std::lock_guard<std::mutex> g(reg().mu);
  reg().counters[name] += delta;
}

void set(const std::string& name, int64_t value) {
  std::lock_guard<std::mutex> g(reg().mu);
  reg().counters[name] = value;
}

void add_time(const std::string& name, int64_t ns) {
  std::lock_guard<std::mutex> g(reg().mu);
  Timer& t = reg().timers[name];
  t.count++;
  t.total_ns += ns;
  if (t.samples.size() >= 1024) t.samples.erase(t.samples.begin());
  t.samples.push_back(ns);
}

int64_t get(const std::string& name) {
  std::lock_guard<std::mutex> g(reg().mu);
  auto it = reg().counters.find(name);
  if (it != reg().counters.end()) return it->second;
  auto jt = reg().timers.find(name);
  return jt != reg().timers.end() ? jt->second.count : 0;
}

int64_t total_ns(const std::string& timer) {
  std::lock_guard<std::mutex> g(reg().mu);
  auto it = reg().timers.find(timer);
  return it != reg().timers.end() ? it->second.total_ns : 0;
}

std::string report() {
  std::lock_guard<std::mutex> g(reg().mu);
  std::string out = "Counters:\n";
  for (auto& [k, v] : reg().counters) out += "  " + k + ": " + std::to_string(v) + "\n";
  out += "Timers:\n";
  for (auto& [k, t] : reg().timers) {
    std::vector<int64_t> s = t.samples;
    std::sort(s.begin(), s.end());
    auto pct = [&](double p) {
      return s.empty() ? 0.0 : static_cast<double>(s[static_cast<size_t>(p * (s.size() - 1))]);
    };
    out += "  " + k + ": count=" + std::to_string(t.count) +
           " total=" + fmt_ms(static_cast<double>(t.total_ns)) + " median=" + fmt_ms(pct(0.5)) +
           " p90=" + fmt_ms(pct(0.9)) + "\n";
  }
  return out;
}

namespace {
// LT_METRICS=1: print the report when the process exits; LT_PROFILE=1: the step profile.
const bool g_report_at_exit = [] {
  if (config::flag_at_load("LT_METRICS")) std::atexit([] { std::fprintf(stderr, "%s", report().c_str()); });
  if (config::flag_at_load("LT_PROFILE"))
    std::atexit([] { std::fprintf(stderr, "%s", profile_report().c_str()); });
  return true;
}();
}  // namespace

void reset() {
  std::lock_guard<std::mutex> g(reg().mu);
  reg().counters.clear();
  reg().timers.clear();
  reg().profile.clear();
}

bool debug_enabled() {
  static const bool on = config::flag("LT_DEBUG");
  return on;
}

bool profile_enabled() {
  static const bool on = config::flag("LT_PROFILE");
  return on;
}

void profile_add(const std::string& step, int64_t ns) {
  std::lock_guard<std::mutex> g(reg().mu);
  auto& [runs, total] = reg().profile[step];
  ++runs;
  total += ns;
}

std::string profile_report(size_t top) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rows;
  {
    std::lock_guard<std::mutex> g(reg().mu);
    rows.assign(reg().profile.begin(), reg().profile.end());
  }
  int64_t all = 0;
  for (const auto& r : rows) all += r.second.second;
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  char line[96];
  std::snprintf(line, sizeof line, "Profile of compiled steps: %s in %zu kinds of step\n",
                fmt_ms(static_cast<double>(all)).c_str(), rows.size());
  std::string out = line;
  out += "   share       total    runs   mean us  step\n";
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& [name, rt] = rows[i];
    std::snprintf(line, sizeof line, "  %5.1f%% %11s %7lld %9.1f  ",
                  all ? 100.0 * static_cast<double>(rt.second) / static_cast<double>(all) : 0.0,
                  fmt_ms(static_cast<double>(rt.second)).c_str(), static_cast<long long>(rt.first),
                  static_cast<double>(rt.second) / 1e3 / static_cast<double>(rt.first));
    out += line + name + "\n";
  }
  return out;
}

}  // namespace lt::metrics_impl
