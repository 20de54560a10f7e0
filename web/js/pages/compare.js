// Compare: which TPU for a model — step time, throughput, MFU, HBM fit, the bottleneck and the
// dollars on every accelerator type (GET /_emulator/compare, docs/cost-model.md). The form's
// fields are the endpoint's query parameters and the page's URL carries them, so a URL
// (#/compare?preset=llama2-7b&globalBatch=512&serving.engine=vllm&...) reproduces the comparison.
// Serving is priced by default (compare_serving.js: its columns beside training in the table, and
// a detailed table); the GPU context rows (compare_gpu.js) sit in their own table, marked as
// outside the TPU model. An HLO module (POSTed, so not in the URL) replaces the model.
import * as api from '../api.js';
import {barChart} from '../charts.js';
import {emptyRow, errorBox, field, formatBytes, formatDollars, formatNumber, formatRate, formatSeconds, h, mount, select} from '../dom.js';
import {gpuCard, renderGpu} from './compare_gpu.js';
import {kDefaultServingEngine, kServingColumns, kServingKeys, renderServing, servingCard, servingCells, servingFields,
        withServing} from './compare_serving.js';

const kPresets = ['llama2-7b', 'llama2-13b', 'llama2-70b', 'llama3-8b', 'llama3-70b', 'mixtral-8x7b', 'mixtral-8x22b'];
const kRematPolicies = ['none', 'minimal', 'full', 'save_dot_except_mlpwi', 'save_dot_except_mlp', 'save_qkv_proj',
                        'save_out_proj', 'qkv_proj_offloaded', 'minimal_offloaded'];
const kShapeFields = [
  ['layers', 'Layers'], ['dModel', 'dModel'], ['heads', 'Heads'], ['kvHeads', 'KV heads'],
  ['headDim', 'Head dim'], ['ffn', 'FFN'], ['vocab', 'Vocab'], ['seqLen', 'Sequence length'],
  ['globalBatch', 'Global batch'], ['experts', 'Experts (MoE)'], ['topK', 'Experts per token'],
];
const kQueryKeys = ['preset', ...kShapeFields.map(([k]) => k), 'capacityFactor', 'acceleratorTypes', 'strategy', 'remat',
                    ...kServingKeys];
// The HLO module the form last loaded: POSTed with the query's other fields, never in the URL.
let hloText = '';
const kDefaults = {preset: 'llama2-7b'};
const kGenerationColors = {v2: '#9aa0a6', v3: '#a142f4', v4: '#e37400', v5e: '#188038', v5p: '#1a73e8', v6e: '#d93025'};

function queryOf(params) {
  const q = new URLSearchParams();
  for (const key of [...kQueryKeys, 'source']) if (params[key]) q.set(key, params[key]);
  return q.toString();
}

// GET with the query, or — for an HLO module — the same fields as a POST body.
function fetchComparison(params) {
  if (params.source !== 'hlo') return api.get(`/_emulator/compare?${queryOf(withServing(params))}`);
  if (!hloText) {
    return Promise.reject(new api.ApiError(400, 'INVALID_ARGUMENT',
                                           'load the HLO module again: a link does not carry it'));
  }
  const body = {hlo: {text: hloText, allowUnsupported: true}};
  if (params.acceleratorTypes) body.acceleratorTypes = params.acceleratorTypes.split(',').filter(Boolean);
  if (params.strategy) body.strategy = params.strategy;
  return api.post('/_emulator/compare', body);
}

function form(params, onSubmit) {
  const preset = select({id: 'compare-preset', name: 'preset'},
                        [{value: '', label: 'Custom shapes'}, ...kPresets], params.preset || '');
  const inputs = kShapeFields.map(([key, label]) => field(label, h('input', {
    id: `compare-${key}`, name: key, type: 'number', min: 1, step: 1, value: params[key] || '',
    placeholder: params.preset ? 'preset' : '', size: 8})));
  const types = h('input', {id: 'compare-types', name: 'acceleratorTypes', value: params.acceleratorTypes || '',
                            placeholder: 'all (e.g. v5e,v5p-128)', size: 22});
  const strategy = select({id: 'compare-strategy', name: 'strategy'},
                          [{value: '', label: 'Fastest that fits'}, {value: 'dp', label: 'Data parallel'},
                           {value: 'fsdp', label: 'FSDP'}, {value: 'tp', label: 'Tensor parallel × FSDP'}],
                          params.strategy || '');
  const capacity = h('input', {id: 'compare-capacityFactor', name: 'capacityFactor', type: 'number', min: 0, step: 'any',
                               value: params.capacityFactor || '', placeholder: 'dropless', size: 8});
  const remat = select({id: 'compare-remat', name: 'remat'},
                       [{value: '', label: 'Auto (offloads when that fits)'}, ...kRematPolicies], params.remat || '');
  const hlo = h('input', {id: 'compare-hlo', type: 'file', accept: '.hlo,.mlir,.txt'});
  return h('form', {id: 'compare-form', 'aria-labelledby': 'compare-form-title', onsubmit: async (event) => {
    event.preventDefault();
    const next = {};
    for (const el of event.target.elements) {
      if (el.name && el.value.trim()) next[el.name] = el.value.trim();
    }
    if (hlo.files && hlo.files.length) {
      hloText = await hlo.files[0].text();
      next.source = 'hlo';
    }
    onSubmit(next);
  }},
  h('h2', {id: 'compare-form-title'}, 'Model'),
  h('div', {class: 'fields'}, field('Preset', preset), inputs, field('Capacity factor', capacity, 'MoE token dropping')),
  h('div', {class: 'fields'}, field('HLO module', hlo, 'instead of the model: an XLA HLO text dump (not kept in the link)')),
  servingFields(params),
  h('div', {class: 'fields'}, field('Accelerator types', types, 'types or generations, comma-separated'),
    field('Sharding', strategy), field('Rematerialisation', remat),
    h('div', {class: 'field'}, h('button', {type: 'submit'}, 'Compare'))));
}

export default {
  title: 'Compare',
  async render(root, params) {
    if (!kQueryKeys.some((k) => params[k]) && params.source !== 'hlo') Object.assign(params, kDefaults);
    // Serving by default, named in the URL so the link says what was priced.
    if (params.source !== 'hlo' && !params['serving.engine']) params['serving.engine'] = kDefaultServingEngine;
    const columns = 17 + kServingColumns.length;
    const serving = servingCard();
    const gpu = gpuCard();
    const errors = h('div');
    const summary = h('p', {id: 'compare-summary'});
    const stepCanvas = h('canvas', {id: 'compare-step-chart', 'aria-label': 'Step time per accelerator type'});
    const costCanvas = h('canvas', {id: 'compare-cost-chart', 'aria-label': 'Dollars per million tokens per accelerator type'});
    const costTitle = h('h2', {id: 'compare-cost-title'}, '$ per 1M tokens');
    const body = h('tbody');
    const unitHead = [h('th', {scope: 'col', class: 'num'}, 'tok/s/chip'), h('th', {scope: 'col', class: 'num'}, 'tok/s')];
    const pricesNote = h('p', {class: 'muted small', id: 'compare-prices'});
    mount(root,
          h('div', {class: 'title-row'}, h('h1', {}, 'Compare'),
            h('a', {id: 'compare-link', href: `#/compare?${queryOf(params)}`}, 'Link to this comparison')),
          h('p', {class: 'muted'}, 'Step time, memory fit (offloading to host memory when that is what fits) and cost of ',
            'one training step — and, beside it, of serving the model (engine "None" for training only) — on every TPU ',
            'generation and slice size, priced by the model in docs/cost-model.md (no hardware is rented, nothing is ',
            'executed). H100 and H200 follow for context, from published figures outside that model.'),
          h('section', {class: 'card'}, form(params, (next) => { location.hash = `#/compare?${queryOf(next)}`; })),
          errors, summary,
          h('div', {class: 'grid cols-2'},
            h('section', {class: 'card', 'aria-labelledby': 'compare-step-title'},
              h('h2', {id: 'compare-step-title'}, 'Step time (log scale, slices that fit)'),
              h('div', {class: 'chart'}, stepCanvas)),
            h('section', {class: 'card', 'aria-labelledby': 'compare-cost-title'}, costTitle,
              h('div', {class: 'chart'}, costCanvas))),
          h('section', {class: 'card', 'aria-labelledby': 'compare-table-title'},
            h('h2', {id: 'compare-table-title'}, 'Every accelerator type'),
            h('div', {class: 'scroll'},
              h('table', {id: 'compare-table', class: 'compact'},
                h('thead', {}, h('tr', {},
                  ['Type', 'Chips', 'Plan', 'Remat', 'Step'].map((t, i) => h('th', {scope: 'col', class: i === 1 || i === 4 ? 'num' : ''}, t)),
                  unitHead,
                  ['MFU', 'HBM / chip', 'Host / chip', 'Bound', '$/step', '$/hour', '$/1M on-demand', '$/1M spot']
                    .map((t, i) => h('th', {scope: 'col', class: i === 3 ? '' : 'num'}, t)),
                  kServingColumns.map((t) => h('th', {scope: 'col', class: 'num serving', title: 'serving'}, t)),
                  h('th', {scope: 'col'}, 'Note'))),
                body)),
            pricesNote),
          gpu.card,
          serving.card);
    mount(body, emptyRow(columns, 'Comparing…'));

    let reply;
    try {
      reply = await api.optional('compare', () => fetchComparison(params));
    } catch (e) {
      mount(errors, errorBox(e));
      mount(body, emptyRow(columns, 'No comparison.'));
      return {};
    }
    if (!reply) {
      mount(body, emptyRow(columns, 'The comparison endpoint (/_emulator/compare) is not served by this tpuemud.'));
      return {};
    }
    renderServing(serving, reply);
    renderGpu(gpu, reply);
    const unit = reply.unit === 'tokens' ? 'tok' : 'samples';
    mount(unitHead[0], `${unit}/s/chip`);
    mount(unitHead[1], `${unit}/s`);
    mount(costTitle, `$ per 1M ${reply.unit}`);
    const fits = reply.rows.filter((r) => r.fits);
    const cheapest = [...fits].sort((a, b) => a.onDemand.perMillionUnits - b.onDemand.perMillionUnits)[0];
    const fastest = [...fits].sort((a, b) => a.stepSeconds - b.stepSeconds)[0];
    mount(summary, `${reply.name}: ${formatNumber(reply.parameters / 1e9, 2)}B parameters, `,
          `${formatNumber(reply.unitsPerStep)} ${reply.unit} per step, `,
          `${formatNumber(reply.modelFlopsPerStep / 1e15, 1)} PFLOP per step. `,
          fits.length ? [`${fits.length} of ${reply.rows.length} types fit. Cheapest per 1M ${reply.unit}: `,
                         h('strong', {}, cheapest.acceleratorType), ` (${formatDollars(cheapest.onDemand.perMillionUnits)} per 1M on demand); fastest: `,
                         h('strong', {}, fastest.acceleratorType), ` (${formatSeconds(fastest.stepSeconds)} a step).`]
                      : 'No accelerator type fits this model: see the notes below.');

    // Charts: one dataset per generation so each bar keeps its generation's colour.
    const labels = fits.map((r) => r.acceleratorType);
    const generations = [...new Set(fits.map((r) => r.generation))];
    barChart(stepCanvas, labels, generations.map((g) => ({
      label: g, color: kGenerationColors[g],
      data: fits.map((r) => (r.generation === g ? r.stepSeconds : null)),
    })), {stacked: true, log: true, valueLabel: 'seconds per step'});
    barChart(costCanvas, labels, [
      {label: 'on-demand', data: fits.map((r) => r.onDemand.perMillionUnits)},
      {label: 'spot', data: fits.map((r) => r.spot.perMillionUnits)},
    ], {valueLabel: `USD per 1M ${reply.unit}`});

    mount(body, reply.rows.map((r) => h('tr', {dataset: {type: r.acceleratorType, fits: String(r.fits)}, class: r.fits ? '' : 'muted'},
      h('th', {scope: 'row'}, r.acceleratorType), h('td', {class: 'num'}, formatNumber(r.chips)),
      h('td', {}, r.plan), h('td', {}, r.remat),
      h('td', {class: 'num'}, formatSeconds(r.stepSeconds)),
      h('td', {class: 'num'}, formatRate(r.unitsPerSecondPerChip)), h('td', {class: 'num'}, formatRate(r.unitsPerSecond)),
      h('td', {class: 'num'}, r.mfu === null ? '—' : `${(r.mfu * 100).toFixed(1)}%`),
      h('td', {class: 'num', title: r.hbmPerChip ? `weights ${formatBytes(r.hbmPerChip.weights)}, gradients ${formatBytes(r.hbmPerChip.gradients)}, ` +
          `optimizer ${formatBytes(r.hbmPerChip.optimizer)}, activations ${formatBytes(r.hbmPerChip.activations)}, working ${formatBytes(r.hbmPerChip.working)}` +
          (r.hbmPerChip.rematerializedByXla ? `; ${formatBytes(r.hbmPerChip.rematerializedByXla)} more recomputed by XLA to fit` : '') : ''},
        r.hbmPerChip ? `${formatBytes(r.hbmPerChip.total)} / ${formatBytes(r.hbmPerChip.capacity)}` : '—'),
      h('td', {class: 'num', title: 'activations (and optimizer state) offloaded to host memory'},
        r.hbmPerChip?.host ? formatBytes(r.hbmPerChip.host) : '—'),
      h('td', {}, r.bottleneck || '—'),
      h('td', {class: 'num'}, formatDollars(r.onDemand?.perStep)), h('td', {class: 'num'}, formatDollars(r.onDemand?.perHour)),
      h('td', {class: 'num'}, formatDollars(r.onDemand?.perMillionUnits)), h('td', {class: 'num'}, formatDollars(r.spot?.perMillionUnits)),
      r.serving ? servingCells(r.serving) : kServingColumns.map(() => h('td', {class: 'num serving'}, '—')),
      h('td', {class: 'wrap small'}, r.problem))));
    const unverified = reply.prices.prices.filter((p) => !p.onDemandFromPricingPage).map((p) => p.generation);
    const usd = (v) => `$${Number(v.toFixed(4))}`;
    mount(pricesNote, `Prices: USD per chip-hour (${reply.prices.prices.map((p) => `${p.generation} ${usd(p.onDemand)} on-demand / ${usd(p.spot)} spot, ${p.region}`).join('; ')}). `,
          unverified.length ? `On-demand figures for ${unverified.join(', ')} are not verified against Google's pricing page; ` : '',
          'spot figures are estimates. Override them with "prices" in POST /_emulator/compare or tpuemu-engine compare --prices.');
    return {};
  },
};
