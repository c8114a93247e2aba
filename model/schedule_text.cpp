#include "model/schedule_text.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "traces/error.hpp"
#include "traces/output_file.hpp"
#include "traces/text.hpp"

namespace ranklab {

namespace {

// The words of `text`, split at spaces.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

// A line-numbered reader: every error names SOURCE:LINE.
class LineParser {
 public:
  LineParser(const std::string& source, int line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& reason) const {
    throw UsageError(fmt::format("{}:{}: {}", source_, line_, reason));
  }

  int number(std::string_view word, std::string_view prefix = {}) const {
    if (!word.starts_with(prefix)) fail(fmt::format("expected {}N, got '{}'", prefix, word));
    word.remove_prefix(prefix.size());
    const std::optional<int> value = parse_whole<int>(word);
    if (!value) {
      fail(prefix.empty() ? fmt::format("expected a number, got '{}'", word)
                          : fmt::format("expected a number after '{}', got '{}'", prefix, word));
    }
    return *value;
  }

  // "mM" or "mM cC" at w[i...]; advances i.
  void microbatch(const std::vector<std::string_view>& w, std::size_t& i, int& m, int& c) const {
    if (i >= w.size()) fail("expected a micro-batch mN");
    m = number(w[i++], "m");
    c = 0;
    if (i < w.size() && w[i].starts_with("c")) c = number(w[i++], "c");
  }

  Step step(std::string_view text) const {
    const std::vector<std::string_view> w = words(text);
    if (w.empty()) fail("expected a step after the stage");
    if (w[0] == "F" || w[0] == "B") {
      std::size_t i = 1;
      int m = 0;
      int c = 0;
      microbatch(w, i, m, c);
      if (i != w.size()) fail(fmt::format("unexpected '{}' after the pass", w[i]));
      return compute_step(w[0] == "F" ? PassKind::forward : PassKind::backward, m, c);
    }
    std::vector<Transfer> transfers;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = text.find(',', start);
      transfers.push_back(transfer(text.substr(start, comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return communication_step(std::move(transfers));
  }

 private:
  Transfer transfer(std::string_view text) const {
    const std::vector<std::string_view> w = words(text);
    if (w.size() < 4 || (w[0] != "send" && w[0] != "recv") || (w[1] != "act" && w[1] != "grad")) {
      fail(fmt::format("expected 'F mN', 'B mN' or 'send|recv act|grad mN -> PEER', got '{}'",
                       trim(text)));
    }
    Transfer t{.send = w[0] == "send",
               .payload = w[1] == "act" ? Payload::activation : Payload::gradient};
    std::size_t i = 2;
    microbatch(w, i, t.microbatch, t.chunk);
    const std::string_view arrow = t.send ? "->" : "<-";
    if (i + 2 != w.size() || w[i] != arrow) {
      fail(fmt::format("expected '{} PEER' at the end of '{}'", arrow, trim(text)));
    }
    t.peer = number(w[i + 1]);
    return t;
  }

  const std::string& source_;
  int line_;
};

}  // namespace

std::string format_schedule(const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  std::string out = fmt::format(
      "# ranklab schedule: one line per step, in each stage's order\n"
      "schedule {} pp {} microbatches {} virtual-stages {}\n",
      to_string(spec.kind), spec.pp, spec.microbatches, spec.virtual_stages);
  for (std::size_t p = 0; p < s.stages.size(); ++p) {
    for (const Step& step : s.stages[p]) {
      out += fmt::format("stage {}: {}\n", p, describe(step, spec.virtual_stages));
    }
  }
  return out;
}

Schedule parse_schedule(std::string_view text, const std::string& source) {
  Schedule out;
  bool header = false;
  int line_number = 0;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    const LineParser parser(source, line_number);
    std::string_view content(line);
    content = content.substr(0, content.find('#'));
    const std::vector<std::string_view> w = words(content);
    if (w.empty()) continue;
    if (!header) {
      if (w.size() != 8 || w[0] != "schedule" || w[2] != "pp" || w[4] != "microbatches" ||
          w[6] != "virtual-stages") {
        parser.fail("expected the header 'schedule KIND pp N microbatches M virtual-stages V'");
      }
      try {
        out.spec = {.kind = parse_schedule_kind(w[1]),
                    .pp = parser.number(w[3]),
                    .microbatches = parser.number(w[5]),
                    .virtual_stages = parser.number(w[7])};
        out.spec.validate();
      } catch (const UsageError& e) {
        if (std::string_view(e.what()).starts_with(source + ":")) throw;
        parser.fail(e.what());
      }
      out.stages.resize(static_cast<std::size_t>(out.spec.pp));
      header = true;
      continue;
    }
    const std::size_t colon = content.find(':');
    if (w[0] != "stage" || colon == std::string_view::npos) {
      parser.fail(fmt::format("expected 'stage P: STEP', got '{}'", trim(content)));
    }
    const std::vector<std::string_view> head = words(content.substr(0, colon));
    if (head.size() != 2) parser.fail("expected 'stage P:' before the step");
    const int stage = parser.number(head[1]);
    if (stage < 0 || stage >= out.spec.pp) {
      parser.fail(fmt::format("stage {} is outside [0, {})", stage, out.spec.pp));
    }
    out.stages[static_cast<std::size_t>(stage)].push_back(parser.step(content.substr(colon + 1)));
  }
  if (!header) throw UsageError(fmt::format("{}: no 'schedule ...' header line", source));
  return out;
}

Schedule read_schedule_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read the schedule file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_schedule(text.str(), path.string());
}

void write_schedule_file(const std::filesystem::path& path, const Schedule& schedule) {
  write_output_file(path, "the schedule",
                    [&](std::ostream& out) { out << format_schedule(schedule); });
}

}  // namespace ranklab
