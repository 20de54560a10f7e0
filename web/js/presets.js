// Job spec presets for the submit form: one per built-in workload (service/jobs/job_spec.h), a
// small engine program (engine/frontend/program_json.h) and an XLA HLO module (its text goes in the form's
// HLO box: hlo_input.js). The person edits the JSON before submitting.
export const kPresets = {
  matmul: {
    label: 'matmul — one GEMM per step',
    spec: {workload: {matmul: {m: 1024, n: 1024, k: 1024, dtype: 'bf16'}}, steps: 10,
           precision: 'DEFAULT'},
  },
  mlp: {
    label: 'mlp — train a small MLP (loss per step)',
    spec: {workload: {mlp: {layers: 2, batch: 32, hidden: 64, steps: 50, learningRate: 0.5}}},
  },
  cnn: {
    label: 'cnn — conv2d + ReLU + dense, trained with SGD',
    spec: {workload: {cnn: {batch: 16, channels: 8, steps: 20, learningRate: 0.1}}},
  },
  transformer: {
    label: 'transformer — attention + MLP blocks (loss per step)',
    spec: {workload: {transformer: {layers: 2, dModel: 32, heads: 4, seqLen: 16, batch: 8, steps: 20,
                                    learningRate: 0.05}}},
  },
  program: {
    label: 'program — your own ops (JSON IR)',
    spec: {
      program: {
        name: 'mlp-forward',
        ops: [
          {id: 'x', op: 'parameter', shape: [64, 128], random: {seed: 3}},
          {id: 'w', op: 'constant', shape: [128, 10], random: {seed: 1, scale: 0.02}},
          {id: 'y', op: 'dot', inputs: ['x', 'w']},
          {id: 'r', op: 'relu', inputs: ['y']},
        ],
        outputs: ['r'],
      },
      steps: 1,
    },
  },
  hlo: {
    label: 'hlo — an XLA HLO module (paste or upload it below)',
    spec: {hlo: {}, steps: 1},
    hlo: true,
  },
};

export function presetText(name) {
  return JSON.stringify(kPresets[name].spec, null, 2);
}
