// Compare, GPU context: the reply's "gpuReference" rows — H100 and H200, one 8-GPU machine each —
// in their own table below the TPU types, with the same columns. They are OUTSIDE the TPU model
// (engine/cost/gpu_reference.h, docs/cost-model.md "GPU context"): published peaks, prices and
// efficiencies, not emulated, so the table is styled apart, every row says so and a footnote
// names the sources.
import {emptyRow, formatBytes, formatDollars, formatNumber, formatRate, formatSeconds, h, mount} from '../dom.js';
import {kServingColumns} from './compare_serving.js';

const kColumns = ['GPU', 'GPUs', 'Machine', 'Step', 'tok/s/GPU', 'tok/s', 'MFU (assumed)', 'Train state / GPU',
                  '$/hour', '$/1M on-demand', '$/1M spot', ...kServingColumns.map((c) => c.replace('chip', 'GPU')), 'Note'];

export function gpuCard() {
  const body = h('tbody');
  const unitHead = [];
  const footnote = h('p', {class: 'muted small', id: 'compare-gpu-sources'});
  const card = h('section', {class: 'card outside-model', id: 'compare-gpu', hidden: true, 'aria-labelledby': 'compare-gpu-title'},
    h('h2', {id: 'compare-gpu-title'}, 'GPUs for context ', h('span', {class: 'badge badge-off'}, 'outside the TPU model')),
    h('p', {class: 'muted small'}, 'Not emulated: published peak, memory and price figures times a published efficiency (footnote), ',
      'for a sense of scale beside the TPU types above. One 8-GPU machine each; the serving columns use the same serving ',
      'options as the TPU rows.'),
    h('div', {class: 'scroll'},
      h('table', {id: 'compare-gpu-table', class: 'compact'},
        h('thead', {}, h('tr', {}, kColumns.map((t, i) => {
          const th = h('th', {scope: 'col', class: [0, 2, kColumns.length - 1].includes(i) ? '' : 'num'}, t);
          if (t === 'tok/s/GPU' || t === 'tok/s') unitHead.push(th);
          return th;
        }))),
        body)),
    footnote);
  return {card, body, footnote, unitHead};
}

function servingCells(s) {
  const priced = s && s.maxBatch >= 1;
  const cell = (text) => h('td', {class: 'num serving'}, priced ? text : '—');
  if (!priced) return kServingColumns.map(() => cell('—'));
  return [cell(formatNumber(Math.round(s.outputTokensPerSecondPerGpu))), cell(formatNumber(Math.round(s.outputTokensPerSecond))),
          cell(formatSeconds(s.decodeStepSeconds)), cell(formatSeconds(s.prefillSeconds)),
          cell(formatDollars(s.usdPerMillionOutputTokens.onDemand))];
}

export function renderGpu({card, body, footnote, unitHead}, reply) {
  const rows = reply.gpuReference || [];
  card.hidden = rows.length === 0;
  if (!rows.length) {
    mount(body, emptyRow(kColumns.length, ''));
    return;
  }
  const unit = reply.unit === 'tokens' ? 'tok' : 'samples';
  mount(unitHead[0], `${unit}/s/GPU`);
  mount(unitHead[1], `${unit}/s`);
  mount(body, rows.map((g) => {
    const t = g.training;
    const s = g.serving;
    const notes = [t && !t.fits ? t.problem : '', s && s.problem ? `serving: ${s.problem}` : ''].filter(Boolean).join('; ');
    return h('tr', {dataset: {gpu: g.gpu, outsideTpuModel: String(g.outsideTpuModel)}, class: 'outside-model',
                    title: g.note},
      h('th', {scope: 'row'}, `${g.gpu} †`), h('td', {class: 'num'}, formatNumber(g.gpus)), h('td', {}, g.machineType),
      h('td', {class: 'num'}, t ? formatSeconds(t.stepSeconds) : '—'),
      h('td', {class: 'num'}, t ? formatRate(t.unitsPerSecondPerGpu) : '—'), h('td', {class: 'num'}, t ? formatRate(t.unitsPerSecond) : '—'),
      h('td', {class: 'num'}, t ? `${(t.mfu * 100).toFixed(1)}%` : '—'),
      h('td', {class: 'num'}, t ? `${formatBytes(t.stateBytesPerGpu)} / ${formatBytes(g.hbmBytes)}` : '—'),
      h('td', {class: 'num'}, formatDollars(g.prices.onDemand * g.gpus)),
      h('td', {class: 'num'}, t ? formatDollars(t.usdPerMillionUnits.onDemand) : '—'),
      h('td', {class: 'num'}, t ? formatDollars(t.usdPerMillionUnits.spot) : '—'),
      servingCells(s),
      h('td', {class: 'wrap small'}, notes || 'context, not emulated'));
  }));
  const a = rows[0].assumed;
  mount(footnote, '† Outside the TPU model: context figures, not emulated. ',
        rows.map((g) => `${g.gpu}: ${g.specSource}; $${g.prices.onDemand}/GPU-hour on demand, $${g.prices.spot} spot ` +
                        `(${g.machineType}, ${g.prices.region}, ${g.prices.asOf}: ${g.prices.source}). `).join(''),
        `Training at an assumed ${(a.trainingMfu * 100).toFixed(0)}% MFU: ${a.mfuSource}. `,
        `Serving: a paged decode roofline at an assumed ${(a.servingMbu * 100).toFixed(0)}% of HBM bandwidth (${a.mbuSource}), `,
        `prefill at the MFU, ${a.engineSource}; NVLink all-reduces are not priced. `,
        'Training state is 16 bytes a parameter sharded over the machine; activations are not counted.');
}
