#include "tests/engine/chip/pe_array_sim.h"

#include <array>

namespace tpuemu::engine::sim {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A value moving through the array. `tag` is the stream index (the input row m for ws, the
// contraction index k for os); `fold` is the fold the value belongs to. Two lanes for cells that do
// two MACs a cycle; lane 1 stays 0 otherwise.
struct Token {
  bool valid = false;
  int64_t tag = 0;
  int64_t fold = 0;
  std::array<int64_t, 2> val{0, 0};
};

// One weight on its way down the double-buffer pipeline, latched by the row it is meant for.
struct WeightToken {
  bool valid = false;
  int dest_row = 0;
  int64_t fold = 0;
  int64_t val = 0;
};

template <typename T>
using Grid = std::vector<std::vector<T>>;

template <typename T>
Grid<T> MakeGrid(int rows, int cols) {
  return Grid<T>(static_cast<size_t>(rows), std::vector<T>(static_cast<size_t>(cols)));
}

// The weight-stationary array (SCALE-Sim ws, and the TPU's double-buffered MXU).
class WsArray {
 public:
  WsArray(const IntMatrix& a, const IntMatrix& b, int rows, int cols, bool double_buffered,
          int macs)
      : a_(a),
        b_(b),
        rows_(rows),
        cols_(cols),
        double_buffered_(double_buffered),
        macs_(macs),
        t_(CeilDiv(a.rows, macs)),
        row_folds_(CeilDiv(a.cols, rows)),
        folds_(row_folds_ * CeilDiv(b.cols, cols)),
        x_(MakeGrid<Token>(rows, cols)),
        p_(MakeGrid<Token>(rows, cols)),
        pipe_(MakeGrid<WeightToken>(rows, cols)),
        w_(MakeGrid<int64_t>(rows, cols)),
        w_fold_(MakeGrid<int64_t>(rows, cols)),
        shadow_(MakeGrid<int64_t>(rows, cols)),
        shadow_fold_(MakeGrid<int64_t>(rows, cols)) {
    for (auto& row : w_fold_) row.assign(row.size(), -1);
    for (auto& row : shadow_fold_) row.assign(row.size(), -1);
  }

  SimResult Run() {
    SimResult result;
    result.out = IntMatrix(a_.rows, b_.cols);
    result.folds = folds_;
    const int64_t expected = folds_ * t_ * cols_;
    int64_t emitted = 0;
    std::vector<int64_t> emitted_per_fold(static_cast<size_t>(folds_), 0);
    stream_start_.assign(static_cast<size_t>(folds_), -1);
    load_start_.assign(static_cast<size_t>(folds_), -1);
    load_start_[0] = 0;
    int64_t next_fold = 0;  // the next fold to start streaming
    for (int64_t t = 0; emitted < expected; ++t) {
      // Controller: decide whether fold `next_fold` starts streaming in this cycle.
      if (next_fold < folds_ && CanStart(next_fold, t)) {
        stream_start_[static_cast<size_t>(next_fold)] = t;
        // Double buffering: the next fold's weights start down the pipeline right away.
        if (double_buffered_ && next_fold + 1 < folds_) {
          load_start_[static_cast<size_t>(next_fold + 1)] = t;
        }
        ++next_fold;
      }
      Step(t, result, emitted, emitted_per_fold);
      if (!double_buffered_ && next_fold < folds_ && next_fold > 0 &&
          emitted_per_fold[static_cast<size_t>(next_fold - 1)] == t_ * cols_ &&
          load_start_[static_cast<size_t>(next_fold)] < 0) {
        // SCALE-Sim: the next fold's weight load starts the cycle after the last output left.
        load_start_[static_cast<size_t>(next_fold)] = t + 1;
      }
      result.last_cycle = t;
    }
    result.hazards = hazards_;
    return result;
  }

 private:
  bool CanStart(int64_t f, int64_t t) const {
    const int64_t load = load_start_[static_cast<size_t>(f)];
    if (load < 0) return false;
    if (!double_buffered_) return t == load + rows_;  // serial: stream right after the R-cycle load
    const bool port_free = f == 0 || t >= stream_start_[static_cast<size_t>(f - 1)] + t_;
    return port_free && shadow_fold_[0][0] == f;  // PE(0,0) sees its weights this cycle
  }

  int64_t FoldK0(int64_t f) const { return (f % row_folds_) * rows_; }
  int64_t FoldN0(int64_t f) const { return (f / row_folds_) * cols_; }
  int64_t B(int64_t k, int64_t n) const {
    return k < b_.rows && n < b_.cols ? b_.at(k, n) : 0;  // the padding of a partial fold
  }

  // The input entering array row r from the left in cycle t, if any.
  Token InjectInput(int r, int64_t t) const {
    Token tok;
    for (int64_t f = folds_ - 1; f >= 0; --f) {
      const int64_t s = stream_start_[static_cast<size_t>(f)];
      if (s < 0 || s > t - r) continue;
      const int64_t j = t - r - s;
      if (j >= t_) return tok;
      tok.valid = true;
      tok.tag = j;
      tok.fold = f;
      const int64_t k = FoldK0(f) + r;
      for (int lane = 0; lane < macs_; ++lane) {
        const int64_t m = j * macs_ + lane;
        tok.val[static_cast<size_t>(lane)] = m < a_.rows && k < a_.cols ? a_.at(m, k) : 0;
      }
      return tok;
    }
    return tok;
  }

  void Step(int64_t t, SimResult& result, int64_t& emitted,
            std::vector<int64_t>& emitted_per_fold) {
    auto new_x = MakeGrid<Token>(rows_, cols_);
    auto new_p = MakeGrid<Token>(rows_, cols_);
    for (int r = 0; r < rows_; ++r) {
      for (int c = 0; c < cols_; ++c) {
        const Token in = c == 0 ? InjectInput(r, t) : x_[r][c - 1];
        new_x[r][c] = in;
        if (!in.valid) {
          if (r > 0 && p_[r - 1][c].valid) ++hazards_;  // a psum with no input to meet
          continue;
        }
        if (double_buffered_ && w_fold_[r][c] != in.fold) {
          if (shadow_fold_[r][c] != in.fold) ++hazards_;  // weights not there in time
          w_[r][c] = shadow_[r][c];
          w_fold_[r][c] = shadow_fold_[r][c];
        }
        Token psum = in;
        for (int lane = 0; lane < 2; ++lane) {
          const size_t l = static_cast<size_t>(lane);
          const int64_t above = r == 0 ? 0 : p_[r - 1][c].val[l];
          psum.val[l] = above + w_[r][c] * in.val[l];
        }
        if (r > 0 &&
            (!p_[r - 1][c].valid || p_[r - 1][c].tag != in.tag || p_[r - 1][c].fold != in.fold)) {
          ++hazards_;
        }
        new_p[r][c] = psum;
      }
    }
    // Outputs leave the bottom of each column.
    for (int c = 0; c < cols_; ++c) {
      const Token& o = new_p[rows_ - 1][c];
      if (!o.valid) continue;
      const int64_t n = FoldN0(o.fold) + c;
      for (int lane = 0; lane < macs_; ++lane) {
        const int64_t m = o.tag * macs_ + lane;
        if (m < result.out.rows && n < result.out.cols) {
          result.out.at(m, n) += o.val[static_cast<size_t>(lane)];
        }
      }
      ++emitted;
      ++emitted_per_fold[static_cast<size_t>(o.fold)];
    }
    LoadWeights(t);
    x_ = std::move(new_x);
    p_ = std::move(new_p);
  }

  // Weight movement in cycle t, after this cycle's swaps read the old shadow registers.
  void LoadWeights(int64_t t) {
    if (!double_buffered_) {
      // SCALE-Sim: the fold's weights shift straight into the active registers, bottom row first.
      for (int64_t f = 0; f < folds_; ++f) {
        const int64_t j = t - load_start_[static_cast<size_t>(f)];
        if (load_start_[static_cast<size_t>(f)] < 0 || j < 0 || j >= rows_) continue;
        for (int c = 0; c < cols_; ++c) {
          for (int r = rows_ - 1; r > 0; --r) w_[r][c] = w_[r - 1][c];
          w_[0][c] = B(FoldK0(f) + rows_ - 1 - j, FoldN0(f) + c);
        }
      }
      return;
    }
    auto new_pipe = MakeGrid<WeightToken>(rows_, cols_);
    for (int c = 0; c < cols_; ++c) {
      for (int r = 0; r < rows_; ++r) {
        WeightToken in = r == 0 ? InjectWeight(c, t) : pipe_[r - 1][c];
        if (in.valid && in.dest_row == r) {
          shadow_[r][c] = in.val;
          shadow_fold_[r][c] = in.fold;
          in.valid = false;  // latched; nothing travels on below its row
        }
        new_pipe[r][c] = in;
      }
    }
    pipe_ = std::move(new_pipe);
  }

  // The weight entering the top of column c in cycle t: column c's load starts c cycles after
  // column 0's, the weight for the bottom row first, so all rows of a column latch together.
  WeightToken InjectWeight(int c, int64_t t) const {
    WeightToken tok;
    for (int64_t f = 0; f < folds_; ++f) {
      const int64_t start = load_start_[static_cast<size_t>(f)];
      if (start < 0) continue;
      const int64_t j = t - start - c;
      if (j < 0 || j >= rows_) continue;
      tok.valid = true;
      tok.dest_row = rows_ - 1 - static_cast<int>(j);
      tok.fold = f;
      tok.val = B(FoldK0(f) + tok.dest_row, FoldN0(f) + c);
    }
    return tok;
  }

  const IntMatrix& a_;
  const IntMatrix& b_;
  const int rows_, cols_;
  const bool double_buffered_;
  const int macs_;
  const int64_t t_, row_folds_, folds_;
  Grid<Token> x_, p_;
  Grid<WeightToken> pipe_;
  Grid<int64_t> w_, w_fold_, shadow_, shadow_fold_;
  std::vector<int64_t> stream_start_, load_start_;
  int64_t hazards_ = 0;
};

// The output-stationary array: every PE owns one output and accumulates it in place.
SimResult RunOs(const IntMatrix& a, const IntMatrix& b, int rows, int cols) {
  SimResult result;
  result.out = IntMatrix(a.rows, b.cols);
  const int64_t t_len = a.cols;  // K streams through
  const int64_t row_folds = CeilDiv(a.rows, rows);
  result.folds = row_folds * CeilDiv(b.cols, cols);
  auto av = MakeGrid<Token>(rows, cols);
  auto bv = MakeGrid<Token>(rows, cols);
  auto acc = MakeGrid<int64_t>(rows, cols);
  int64_t t = 0;
  for (int64_t f = 0; f < result.folds; ++f) {
    const int64_t m0 = (f % row_folds) * rows;
    const int64_t n0 = (f / row_folds) * cols;
    const int64_t base = t;
    int64_t done = 0;
    for (; done < static_cast<int64_t>(rows) * cols; ++t) {
      auto new_a = MakeGrid<Token>(rows, cols);
      auto new_b = MakeGrid<Token>(rows, cols);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
          Token ta = c > 0 ? av[r][c - 1] : Token{};
          if (c == 0 && t - base - r >= 0 && t - base - r < t_len) {
            const int64_t k = t - base - r;
            ta = Token{true, k, f, {m0 + r < a.rows ? a.at(m0 + r, k) : 0, 0}};
          }
          Token tb = r > 0 ? bv[r - 1][c] : Token{};
          if (r == 0 && t - base - c >= 0 && t - base - c < t_len) {
            const int64_t k = t - base - c;
            tb = Token{true, k, f, {n0 + c < b.cols ? b.at(k, n0 + c) : 0, 0}};
          }
          new_a[r][c] = ta;
          new_b[r][c] = tb;
          if (ta.valid != tb.valid || (ta.valid && (ta.tag != tb.tag || ta.fold != tb.fold))) {
            ++result.hazards;
          }
          if (!ta.valid || !tb.valid) continue;
          acc[r][c] += ta.val[0] * tb.val[0];
          if (ta.tag == t_len - 1) {  // last MAC: the output leaves in this cycle
            if (m0 + r < a.rows && n0 + c < b.cols) result.out.at(m0 + r, n0 + c) = acc[r][c];
            acc[r][c] = 0;
            ++done;
            result.last_cycle = t;
          }
        }
      }
      av = std::move(new_a);
      bv = std::move(new_b);
    }
  }
  return result;
}

}  // namespace

IntMatrix IntMatrix::Transposed() const {
  IntMatrix t(cols, rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t.at(c, r) = at(r, c);
  }
  return t;
}

IntMatrix ReferenceMatmul(const IntMatrix& a, const IntMatrix& b) {
  IntMatrix out(a.rows, b.cols);
  for (int64_t m = 0; m < a.rows; ++m) {
    for (int64_t n = 0; n < b.cols; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < a.cols; ++k) sum += a.at(m, k) * b.at(k, n);
      out.at(m, n) = sum;
    }
  }
  return out;
}

void PrintTo(const IntMatrix& m, std::ostream* os) {
  *os << m.rows << "x" << m.cols << " [";
  for (int64_t r = 0; r < m.rows; ++r) {
    *os << (r ? "; " : "");
    for (int64_t c = 0; c < m.cols; ++c) *os << (c ? " " : "") << m.at(r, c);
  }
  *os << "]";
}

SimResult SimulateScaleSim(const IntMatrix& a, const IntMatrix& b, int rows, int cols,
                           Dataflow dataflow) {
  switch (dataflow) {
    case Dataflow::kWeightStationary:
      return WsArray(a, b, rows, cols, /*double_buffered=*/false, 1).Run();
    case Dataflow::kOutputStationary:
      return RunOs(a, b, rows, cols);
    case Dataflow::kInputStationary: {
      const IntMatrix bt = b.Transposed();
      const IntMatrix at = a.Transposed();
      SimResult r = WsArray(bt, at, rows, cols, /*double_buffered=*/false, 1).Run();
      r.out = r.out.Transposed();
      return r;
    }
  }
  return {};
}

SimResult SimulateTpuMxu(const IntMatrix& a, const IntMatrix& b, int rows, int cols,
                         int macs_per_cell) {
  return WsArray(a, b, rows, cols, /*double_buffered=*/true, macs_per_cell).Run();
}

}  // namespace tpuemu::engine::sim
