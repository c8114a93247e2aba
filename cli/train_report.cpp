#include "cli/train_report.hpp"

#include "cli/run_diagnosis.hpp"
#include "cli/train_flags.hpp"
#include "emulator/report_json.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

namespace ranklab::cli {

namespace {

using Json = nlohmann::ordered_json;

// "0-1", "3", or "0-1,4-5" for the chunks of an interleaved stage.
std::string layers_text(const std::vector<std::int64_t>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", layers[i]) : fmt::format("{}-{}", layers[i], layers[j]);
    i = j + 1;
  }
  return out;
}

std::string groups_text(const RankRow& row) {
  return fmt::format("{} {} {}", row.groups[0], row.groups[1], row.groups[2]);
}

std::string verdict(const ErrorStat& stat, double tolerance) {
  return stat.within(tolerance) ? "ok" : "FAIL";
}

void print_header(std::ostream& out, const TrainReport& r) {
  const TrainSpec& s = r.spec;
  const ModelShape& m = s.shape;
  fmt::print(out, "ranklab run: mode {}, {}, world {}\n", to_string(s.mode), s.layout.describe(),
             s.layout.world_size());
  fmt::print(out, "model: B{} S{} H{} I{} L{}{}, {}, {}\n", m.batch, m.seq, m.hidden, m.inter,
             m.layers, s.mode == ParallelMode::tp ? " (layer 0 only, as the seed's TP test)" : "",
             long_name(s.dtype),
             s.init_from.empty() ? fmt::format("seed {}", s.seed)
                                 : fmt::format("weights and data from {}", s.init_from.string()));
  fmt::print(out, "cluster: {}\n", r.cluster);
}

// The widest group name of each kind, so that the tables line up for any world.
std::array<std::size_t, 3> group_widths(const TrainReport& r) {
  std::array<std::size_t, 3> widths = {8, 8, 8};
  for (const RankRow& row : r.ranks) {
    for (std::size_t k = 0; k < 3; ++k) widths[k] = std::max(widths[k], row.groups[k].size());
  }
  return widths;
}

void print_layout(std::ostream& out, const TrainReport& r) {
  const auto w = group_widths(r);
  fmt::print(out, "\nlayout\n{:>4}  {:>2} {:>2} {:>2}  {:<6}  {:<{}}  {:<{}}  {}\n", "rank", "d",
             "p", "t", "layers", "tp group", w[0], "pp group", w[1], "dp group");
  for (const RankRow& row : r.ranks) {
    fmt::print(out, "{:>4}  {:>2} {:>2} {:>2}  {:<6}  {:<{}}  {:<{}}  {}\n", row.rank, row.coords.d,
               row.coords.p, row.coords.t, layers_text(row.layers), row.groups[0], w[0],
               row.groups[1], w[1], row.groups[2]);
  }
}

// The schedule, its verdict, and per stage: layers, compute order and messages.
void print_pipeline(std::ostream& out, const TrainReport& r) {
  const PipelineReport& p = r.pipeline;
  const ScheduleSpec& spec = p.schedule.spec;
  fmt::print(out, "\npipeline: {}\n", r.spec.step.describe());
  if (p.verdict.ok()) {
    fmt::print(out,
               "schedule validated: each forward before its backward, every send matched by a "
               "receive, dry run under rendezvous sends without deadlock ({} messages)\n",
               p.verdict.messages);
  }
  const std::vector<StageMessages> messages = p.schedule.messages();
  std::vector<std::array<std::string, 5>> rows;
  std::array<std::size_t, 5> widths = {6, 13, 9, 17, 12};
  for (int stage = 0; stage < spec.pp; ++stage) {
    const auto st = static_cast<std::size_t>(stage);
    const auto& m = messages[st];
    std::array<std::string, 5> row = {
        layers_text(stage_layer_indices(r.spec.shape.layers, spec.pp, spec.virtual_stages, stage)),
        p.schedule.compute_order(stage), std::to_string(p.schedule.peak_in_flight(stage)),
        fmt::format("{} ({} sent, {} received)", m.total(), m.sent, m.received),
        st < p.traced_messages.size()
            ? fmt::format("{} on {}", p.traced_messages[st],
                          plural(static_cast<std::size_t>(p.ranks_per_stage), "rank"))
            : "-"};
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    rows.push_back(std::move(row));
  }
  // "in flight": the most forwards awaiting their backward, the activations a rank keeps.
  fmt::print(out, "{:>5}  {:<{}}  {:<{}}  {:>{}}  {:<{}}  {}\n", "stage", "layers", widths[0],
             "compute order", widths[1], "in flight", widths[2], "messages per rank", widths[3],
             "in the trace");
  for (std::size_t stage = 0; stage < rows.size(); ++stage) {
    const auto& row = rows[stage];
    fmt::print(out, "{:>5}  {:<{}}  {:<{}}  {:>{}}  {:<{}}  {}\n", stage, row[0], widths[0], row[1],
               widths[1], row[2], widths[2], row[3], widths[3], row[4]);
  }
}

// Megatron's iteration log as a table: a line per step, the loss averaged over replicas.
void print_steps(std::ostream& out, const TrainReport& r) {
  const TrainingOptions& t = r.spec.training;
  fmt::print(out,
             "\ntraining: {} steps of SGD, lr {} (each step: forward, backward, DP all_reduce of "
             "the gradients, then every rank updates its own shards)\n{:>{}}  {:>12}  {:>12}  "
             "{:>8}  {:>13}  {}\n",
             t.steps, *t.lr, "step", std::max<std::size_t>(4, std::to_string(t.steps).size()),
             "loss", "dense", "|diff|", "max rel error", "check");
  const std::size_t width = std::max<std::size_t>(4, std::to_string(t.steps).size());
  for (const TrainStepRow& row : r.steps) {
    const double loss = TrainStepRow::mean(row.losses);
    const double dense = TrainStepRow::mean(row.dense);
    // '#': trailing zeros kept, so every loss has 9 significant digits ("0.27217117" beside
    // "0.277851045" read as a column of mixed precision).
    fmt::print(out, "{:>{}}  {:>#12.9g}  {:>#12.9g}  {:>8.1e}  {:>13.2e}  {}\n", row.step + 1, width,
               loss, dense, std::abs(loss - dense), row.max_relative, row.ok ? "ok" : "FAIL");
  }
  if (r.spec.layout.dp > 1) {
    fmt::print(out, "(loss: the mean over the {} replicas' losses)\n", r.spec.layout.dp);
  }
}

void print_losses(std::ostream& out, const TrainReport& r) {
  fmt::print(out, "\nloss per replica (last stage{})\n",
             r.spec.multi_step() ? fmt::format(", step {}", r.spec.training.steps) : "");
  for (const ReplicaLoss& l : r.losses) {
    fmt::print(out, "replica {}: {:.9g}  (dense {:.9g}, |diff| {:.1e}{})\n", l.replica, l.loss,
               l.dense, std::abs(l.loss - l.dense),
               l.golden ? fmt::format(", golden {:.9g}", *l.golden) : "");
  }
}

std::string relative_cell(const ErrorStat& stat) {
  return stat.compared ? fmt::format("{:.2e}", stat.relative()) : "-";
}

void print_checks(std::ostream& out, const TrainReport& r) {
  const bool golden = !r.ranks.empty() && r.ranks.front().check && r.ranks.front().check->golden;
  const bool steps = r.spec.multi_step();
  // More than one step: each rank's row is its worst step (named), updated weights too.
  const std::string title =
      steps ? fmt::format("check against the dense reference at each of the {} steps{} ({}: "
                          "error <= {:.0e} x largest magnitude; gradients, output, loss and "
                          "updated weights); per rank its worst step",
                          r.spec.training.steps, golden ? ", and step 1 against the golden set" : "",
                          long_name(r.spec.dtype), r.tolerance)
            : fmt::format("gradient check against the dense reference{} ({}: error <= {:.0e} x "
                          "largest magnitude; output and loss too)",
                          golden ? " and the golden set" : "", long_name(r.spec.dtype),
                          r.tolerance);
  const std::size_t groups_width =
      std::max<std::size_t>(6, std::accumulate(r.ranks.begin(), r.ranks.end(), std::size_t{0},
                                               [](std::size_t w, const RankRow& row) {
                                                 return std::max(w, groups_text(row).size());
                                               }));
  const auto weights_cell = [steps](const std::string& weights) {
    return steps ? fmt::format("  {:>11}", weights) : std::string();
  };
  fmt::print(out,
             "\n{}\n{:>4}  {:<7}  {:<{}}{}  {:>12}  {:>12}  {:>10}  {:>9}{}{}  {}\n", title,
             "rank", "(d,p,t)", "groups", groups_width, steps ? "  step" : "", "grad max abs",
             "grad max rel", "output rel", "loss rel", weights_cell("weights rel"),
             golden ? fmt::format("  {:>10}", "golden rel") : "", "check");
  for (const RankRow& row : r.ranks) {
    const RankCheck& c = *row.check;
    fmt::print(out, "{:>4}  {:<7}  {:<{}}{}  {:>12.3e}  {:>12.3e}  {:>10}  {:>9}{}{}  {}\n",
               row.rank, fmt::format("({},{},{})", row.coords.d, row.coords.p, row.coords.t),
               groups_text(row), groups_width,
               steps ? fmt::format("  {:>4}", row.check_step + 1) : "", c.grads.max_abs,
               c.grads.relative(), relative_cell(c.output), relative_cell(c.loss),
               weights_cell(c.weights ? relative_cell(*c.weights) : "-"),
               c.golden ? fmt::format("  {:>10}", relative_cell(*c.golden)) : "",
               c.ok(r.tolerance) ? "ok" : "FAIL");
  }
  if (r.dense_golden) {
    const DenseGoldenCheck& g = *r.dense_golden;
    fmt::print(out,
               "dense reference vs the golden set: loss {:.2e} {}, outputs {:.2e} {}, "
               "gradients {:.2e} {} (relative)\n",
               g.loss.relative(), verdict(g.loss, r.tolerance), g.output.relative(),
               verdict(g.output, r.tolerance), g.grads.relative(), verdict(g.grads, r.tolerance));
  }
}

void print_traffic(std::ostream& out, const TrainReport& r) {
  // Sequence parallelism's collectives get columns only when a run has them, so the seed's
  // table is unchanged.
  bool sequence_parallel = false;
  for (const KindTraffic& t : r.traffic) {
    sequence_parallel = sequence_parallel || t.all_gather.count > 0 || t.reduce_scatter.count > 0;
  }
  const auto sp_cells = [&](const std::string& gather, const std::string& scatter) {
    return sequence_parallel ? fmt::format("  {:>18}  {:>18}", gather, scatter) : std::string();
  };
  fmt::print(out,
             "\ntraffic per group kind (from the trace, summed over ranks: operations / "
             "bytes)\n{:<4}  {:>6}  {:>18}{}  {:>16}  {:>16}  {:>18}\n",
             "kind", "groups", "all_reduce", sp_cells("all_gather", "reduce_scatter"), "send",
             "recv", "total");
  const auto cell = [](const OpTally& t) { return fmt::format("{} / {}", t.count, t.bytes); };
  for (const GroupKind kind : kGroupKinds) {
    const auto k = static_cast<std::size_t>(kind);
    const KindTraffic& t = r.traffic[k];
    std::string name(to_string(kind));
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    fmt::print(out, "{:<4}  {:>6}  {:>18}{}  {:>16}  {:>16}  {:>18}\n", name, r.group_counts[k],
               cell(t.all_reduce), sp_cells(cell(t.all_gather), cell(t.reduce_scatter)),
               cell(t.send), cell(t.recv), cell(t.total()));
  }
  const bool seed = r.spec.step.is_seed();
  const std::string algorithm =
      seed ? "the seed's algorithm"
           : fmt::format("schedule {}, TP comm {}", r.pipeline.schedule.spec.describe(),
                         to_string(r.spec.step.tp_comm));
  if (!r.traffic_checked) {
    fmt::print(out, "expected traffic: not checked (the {} counts assume --algo direct)\n",
               seed ? "seed's" : "expected");
  } else if (r.traffic_mismatches.empty()) {
    fmt::print(out, "expected traffic ({}, rank by rank): matches\n", algorithm);
  } else {
    fmt::print(out, "expected traffic ({}): MISMATCH\n", algorithm);
    for (const std::string& line : r.traffic_mismatches) fmt::print(out, "  {}\n", line);
  }
}

Json stat_json(const ErrorStat& s) {
  return Json{{"max_abs", s.max_abs}, {"scale", s.scale}, {"relative", s.relative()}};
}

Json tally_json(const OpTally& t) { return Json{{"count", t.count}, {"bytes", t.bytes}}; }

Json rank_json(const RankRow& row, double tolerance) {
  Json j{{"rank", row.rank},
         {"d", row.coords.d},
         {"p", row.coords.p},
         {"t", row.coords.t},
         {"layers", Json::array()},
         {"groups", {{"tp", row.groups[0]}, {"pp", row.groups[1]}, {"dp", row.groups[2]}}}};
  for (const std::int64_t l : row.layers) j["layers"].push_back(l);
  if (row.check) {
    const RankCheck& c = *row.check;
    j["max_abs_error"] = c.max_abs();
    j["max_relative_error"] = c.max_relative();
    j["ok"] = c.ok(tolerance);
    j["errors"] = {{"grads", stat_json(c.grads)}, {"output", stat_json(c.output)}};
    if (c.loss.compared) j["errors"]["loss"] = stat_json(c.loss);
    if (c.golden) j["errors"]["golden_grads"] = stat_json(*c.golden);
    if (c.weights) {
      j["errors"]["weights"] = stat_json(*c.weights);
      j["check_step"] = row.check_step + 1;
    }
  }
  return j;
}

Json pipeline_json(const TrainReport& r) {
  const PipelineReport& p = r.pipeline;
  const ScheduleSpec& spec = p.schedule.spec;
  Json j{{"schedule", to_string(spec.kind)},
         {"microbatches", spec.microbatches},
         {"virtual_stages", spec.virtual_stages},
         {"tp_comm", to_string(r.spec.step.tp_comm)},
         {"valid", p.verdict.ok()},
         {"stages", Json::array()}};
  const std::vector<StageMessages> messages = p.schedule.messages();
  for (int stage = 0; stage < spec.pp; ++stage) {
    const auto st = static_cast<std::size_t>(stage);
    Json s{
        {"stage", stage},
        {"layers", stage_layer_indices(r.spec.shape.layers, spec.pp, spec.virtual_stages, stage)},
        {"compute_order", p.schedule.compute_order(stage)},
        {"peak_in_flight", p.schedule.peak_in_flight(stage)},
        {"messages_per_rank", {{"sent", messages[st].sent}, {"received", messages[st].received}}}};
    if (st < p.traced_messages.size()) s["traced_messages"] = p.traced_messages[st];
    j["stages"].push_back(s);
  }
  return j;
}

Json training_json(const TrainReport& r) {
  Json j{{"steps", r.spec.training.steps}, {"lr", *r.spec.training.lr}, {"per_step", Json::array()}};
  for (const TrainStepRow& row : r.steps) {
    j["per_step"].push_back(Json{{"step", row.step + 1},
                                 {"loss", TrainStepRow::mean(row.losses)},
                                 {"dense", TrainStepRow::mean(row.dense)},
                                 {"losses", row.losses},
                                 {"dense_losses", row.dense},
                                 {"max_relative_error", row.max_relative},
                                 {"ok", row.ok}});
  }
  return j;
}

}  // namespace

bool TrainReport::checks_ok() const {
  for (const RankRow& row : ranks) {
    if (!row.check || !row.check->ok(tolerance)) return false;
  }
  for (const TrainStepRow& step : steps) {
    if (!step.ok) return false;
  }
  if (dense_golden &&
      !(dense_golden->loss.within(tolerance) && dense_golden->output.within(tolerance) &&
        dense_golden->grads.within(tolerance))) {
    return false;
  }
  return traffic_mismatches.empty();
}

std::string TrainReport::verdict() const {
  if (!run.ok()) return run.summary;
  if (checks_ok()) return run.summary + "; every check passed";
  std::vector<std::string> failed;
  const auto off = std::count_if(ranks.begin(), ranks.end(), [&](const RankRow& row) {
    return !row.check || !row.check->ok(tolerance);
  });
  const auto first_failed = std::find_if(steps.begin(), steps.end(),
                                         [](const TrainStepRow& step) { return !step.ok; });
  if (off > 0) {
    failed.push_back(fmt::format(
        "{} of {} differ{} from the dense reference{}", off, plural(ranks.size(), "rank"),
        off == 1 ? "s" : "",
        first_failed == steps.end() ? "" : fmt::format(" (from step {})", first_failed->step + 1)));
  }
  if (dense_golden &&
      !(dense_golden->loss.within(tolerance) && dense_golden->output.within(tolerance) &&
        dense_golden->grads.within(tolerance))) {
    failed.push_back("the dense reference differs from PyTorch's");
  }
  if (!traffic_mismatches.empty()) failed.push_back("the traffic differs from the seed's algorithm");
  return fmt::format("check failed: {} finished, but {}", plural(ranks.size(), "rank"),
                     fmt::join(failed, "; "));
}

std::string TrainReport::status() const {
  if (!run.ok()) return to_string(run.status);
  return checks_ok() ? "ok" : "check failed";
}

int TrainReport::exit_code() const {
  if (!run.ok()) return ranklab::exit_code(run.status);
  return checks_ok() ? 0 : 2;
}

std::string wall_time(double ms) {
  return ms < 10000 ? fmt::format("{:.1f} ms", ms) : fmt::format("{:.1f} s", ms / 1000);
}

void print_text(std::ostream& out, const TrainReport& r) {
  print_header(out, r);
  print_layout(out, r);
  print_pipeline(out, r);
  if (r.run.ok()) {
    if (r.spec.multi_step()) print_steps(out, r);
    print_losses(out, r);
    print_checks(out, r);
    print_traffic(out, r);
    fmt::print(out,
               "\ntime: {} for the run on the cluster (start-up and {} on {} "
               "ranks), {} for the dense reference\n",
               wall_time(r.run_ms),
               r.spec.multi_step() ? fmt::format("{} steps", r.spec.training.steps) : "one step",
               r.spec.layout.world_size(), wall_time(r.dense_ms));
    if (!r.saved_to.empty()) fmt::print(out, "saved: {}\n", r.saved_to);
  } else {
    fmt::print(out, "\n{}\n", render_analysis(r.run.analysis));
  }
  if (!r.virtual_time.empty()) fmt::print(out, "\n{}", r.virtual_time);
  print_diagnosis(out, r.run.culprit, r.run.faults);
  fmt::print(out, "result: {}\n", r.verdict());
  if (!r.trace_path.empty()) fmt::print(out, "trace: {}\n", r.trace_path);
}

nlohmann::ordered_json to_json(const TrainReport& r) {
  const TrainSpec& s = r.spec;
  Json j = report_header("run", r.status(), r.exit_code());
  j["result"] = r.verdict();
  j["program"] = "main job";
  j.update(Json{{"mode", to_string(s.mode)},
                {"tp", s.layout.tp},
                {"pp", s.layout.pp},
                {"dp", s.layout.dp},
                {"order", to_string(s.layout.order)},
                {"world", s.layout.world_size()},
                {"shape",
                 {{"batch", s.shape.batch},
                  {"seq", s.shape.seq},
                  {"hidden", s.shape.hidden},
                  {"inter", s.shape.inter},
                  {"layers", s.shape.layers}}},
                {"dtype", long_name(s.dtype)},
                {"seed", s.seed},
                {"init_from", s.init_from.string()},
                {"cluster", r.cluster},
                {"tolerance", r.tolerance}});
  j["ranks"] = Json::array();
  for (const RankRow& row : r.ranks) j["ranks"].push_back(rank_json(row, r.tolerance));
  j["losses"] = Json::array();
  for (const ReplicaLoss& l : r.losses) {
    Json loss{{"replica", l.replica}, {"loss", l.loss}, {"dense", l.dense}};
    if (l.golden) loss["golden"] = *l.golden;
    j["losses"].push_back(loss);
  }
  for (const GroupKind kind : kGroupKinds) {
    const KindTraffic& t = r.traffic[static_cast<std::size_t>(kind)];
    j["traffic"][std::string(to_string(kind))] = {
        {"groups", r.group_counts[static_cast<std::size_t>(kind)]},
        {"all_reduce", tally_json(t.all_reduce)},
        {"send", tally_json(t.send)},
        {"recv", tally_json(t.recv)},
        {"all_gather", tally_json(t.all_gather)},
        {"reduce_scatter", tally_json(t.reduce_scatter)},
        {"other", tally_json(t.other)},
        {"total", tally_json(t.total())}};
  }
  j["pipeline"] = pipeline_json(r);
  if (s.multi_step()) j["training"] = training_json(r);
  j["traffic_checked"] = r.traffic_checked;
  j["traffic_mismatches"] = r.traffic_mismatches;
  if (r.dense_golden) {
    j["dense_vs_golden"] = {{"loss", stat_json(r.dense_golden->loss)},
                            {"output", stat_json(r.dense_golden->output)},
                            {"grads", stat_json(r.dense_golden->grads)}};
  }
  j["time_ms"] = {{"run", r.run_ms}, {"dense", r.dense_ms}};
  j["checks_ok"] = r.run.ok() && r.checks_ok();
  j.update(run_report_json(r.run));
  j["trace"] = r.trace_path;
  j["saved"] = r.saved_to;
  if (!r.virtual_time_json.is_null()) j["virtual_time"] = r.virtual_time_json;
  return j;
}

}  // namespace ranklab::cli
