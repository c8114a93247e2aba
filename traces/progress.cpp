#include "traces/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>
#include <utility>

namespace ranklab {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kRedraw = std::chrono::milliseconds(200);
constexpr auto kDefaultDelay = std::chrono::milliseconds(2000);

Clock::duration delay() {
  const char* text = std::getenv("RANKLAB_PROGRESS_DELAY_MS");
  if (text == nullptr || *text == '\0') return kDefaultDelay;
  char* end = nullptr;
  const long ms = std::strtol(text, &end, 10);
  return *end == '\0' && ms >= 0 ? std::chrono::milliseconds(ms) : kDefaultDelay;
}

void write_stderr(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) return;  // progress is a courtesy: a failing terminal must not stop the task
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string amount(std::uint64_t n, Progress::Unit unit) {
  if (unit == Progress::Unit::bytes) return fmt::format("{}", n >> 20);
  return fmt::format("{}", n);
}

}  // namespace

Progress::Progress(std::string task, std::uint64_t total, Unit unit, std::string items)
    : task_(std::move(task)),
      total_(total),
      unit_(unit),
      items_(unit == Unit::bytes ? "MB" : std::move(items)),
      enabled_(wanted()),
      start_(Clock::now()),
      next_draw_(start_ + delay()) {}

Progress::~Progress() { finish(); }

bool Progress::wanted() {
  const char* setting = std::getenv("RANKLAB_PROGRESS");
  if (setting != nullptr && std::string_view(setting) == "0") return false;
  return ::isatty(STDERR_FILENO) == 1;
}

std::string Progress::line(std::uint64_t done, double seconds) const {
  const std::string unit = items_.empty() ? "" : " " + items_;
  if (total_ == 0) return fmt::format("{}: {}{}, {:.0f} s", task_, amount(done, unit_), unit, seconds);
  const std::uint64_t shown = done < total_ ? done : total_;
  return fmt::format("{}: {}% ({} of {}{}), {:.0f} s", task_, shown * 100 / total_,
                     amount(shown, unit_), amount(total_, unit_), unit, seconds);
}

void Progress::check(std::uint64_t done) {
  const std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || !enabled_) return;  // another thread draws
  const Clock::time_point now = Clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kRedraw;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  // "\r" back to the line's start, "\033[K" erases what a longer earlier line left.
  write_stderr(fmt::format("\r{}\033[K", line(done, seconds)));
  drawn_ = true;
}

void Progress::finish() {
  enabled_ = false;
  const std::lock_guard lock(mutex_);
  if (drawn_) write_stderr("\r\033[K");
  drawn_ = false;
}

}  // namespace ranklab
