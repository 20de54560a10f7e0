// Compare, serving: the form fields that ask GET /_emulator/compare to price serving the model
// (serving.engine, serving.batch, serving.inputLen, … in the query; docs/cost-model.md "Serving"),
// the serving columns beside the training ones in the main table, and the detailed table of the
// answer — prefill and decode throughput, latency, KV cache, the largest batch and the dollars per
// million output tokens on every accelerator type. Serving is priced by default (engine jetstream,
// the API's defaults for the rest); engine "none" asks for training only.
import {emptyRow, field, formatBytes, formatDollars, formatNumber, formatSeconds, h, mount, select} from '../dom.js';

export const kServingKeys = ['serving.engine', 'serving.batch', 'serving.inputLen', 'serving.outputLen', 'serving.weights',
                             'serving.kvCache', 'serving.tp'];
export const kDefaultServingEngine = 'jetstream';

// The parameters the endpoint gets: serving on by default for a model, off with engine "none".
export function withServing(params) {
  const out = {...params};
  if (out['serving.engine'] === 'none') {
    for (const key of kServingKeys) delete out[key];
  } else if (!out['serving.engine']) {
    out['serving.engine'] = kDefaultServingEngine;
  }
  return out;
}

// The serving columns of the main table, beside each type's training figures.
export const kServingColumns = ['Out tok/s/chip', 'Out tok/s (slice)', 'Latency/token', 'TTFT', '$/1M out'];

function rounded(v) {
  return v === undefined || v === null ? '—' : formatNumber(Math.round(v));
}

export function servingCells(s) {
  const priced = s && s.maxBatch >= 1;
  const cell = (text, title) => h('td', {class: 'num serving', title: title || ''}, priced ? text : '—');
  if (!priced) return kServingColumns.map(() => cell('—', s ? s.problem : 'serving not priced'));
  return [cell(rounded(s.outputTokensPerSecondPerChip), `${s.engine}, batch ${s.batch} per replica, tp ${s.tp} × ${s.replicas}`),
          cell(rounded(s.outputTokensPerSecondPerChip * s.chips), `${s.chips} chips`),
          cell(formatSeconds(s.decodeStepSeconds), 'one decode step of the batch: time per output token'),
          cell(formatSeconds(s.prefillSeconds), 'one prompt\'s prefill without queueing'),
          cell(formatDollars(s.usdPerMillionOutputTokens.onDemand), `spot ${formatDollars(s.usdPerMillionOutputTokens.spot)}`)];
}

export function servingFields(params) {
  const number = (key, label, placeholder) => field(label, h('input', {
    id: `compare-${key.replace('.', '-')}`, name: key, type: 'number', min: 1, step: 1,
    value: params[key] || '', placeholder, size: 8}));
  const dtype = (key, label) => field(label, select({id: `compare-${key.replace('.', '-')}`, name: key},
                                                    [{value: '', label: 'bf16 (default)'}, 'bf16', 'int8'], params[key] || ''));
  const engine = field('Serving engine', select({id: 'compare-serving-engine', name: 'serving.engine'},
    [{value: 'jetstream', label: 'JetStream'}, {value: 'vllm', label: 'vLLM'}, {value: 'ideal', label: 'Ideal (chip only)'},
     {value: 'none', label: 'None (training only)'}], params['serving.engine'] || kDefaultServingEngine));
  return h('div', {class: 'fields', id: 'compare-serving-fields'}, engine,
           number('serving.batch', 'Serving batch', 'largest'), number('serving.inputLen', 'Prompt tokens', '1024'),
           number('serving.outputLen', 'Output tokens', '1024'), dtype('serving.weights', 'Weights'),
           dtype('serving.kvCache', 'KV cache'), number('serving.tp', 'Chips per replica', 'cheapest'));
}

// The serving card: empty (and hidden) unless the reply priced serving.
export function servingCard() {
  const body = h('tbody');
  const caption = h('p', {class: 'muted small', id: 'compare-serving-caption'});
  const card = h('section', {class: 'card', id: 'compare-serving', hidden: true, 'aria-labelledby': 'compare-serving-title'},
    h('h2', {id: 'compare-serving-title'}, 'Serving'), caption,
    h('div', {class: 'scroll'},
      h('table', {id: 'compare-serving-table', class: 'compact'},
        h('thead', {}, h('tr', {},
          ['Type', 'TP × replicas', 'Batch', 'Max batch', 'TTFT', 'TPOT', 'Out tok/s/chip', 'Decode tok/s/chip', 'Prefill tok/s/chip',
           'Weights + KV / chip', 'Bound', '$/1M out on-demand', '$/1M out spot', 'Note']
            .map((t) => h('th', {scope: 'col', class: ['Type', 'Bound', 'Note'].includes(t) ? '' : 'num'}, t)))),
        body)));
  return {card, body, caption};
}

export function renderServing({card, body, caption}, reply) {
  card.hidden = !reply.serving;
  if (!reply.serving) {
    mount(body, emptyRow(14, ''));
    return;
  }
  const o = reply.serving;
  mount(caption, `${reply.name} served with ${o.engine}: ${o.batch > 0 ? `batch ${o.batch}` : 'the largest batch that fits'}, `,
        `${formatNumber(o.inputLen)} tokens in, ${formatNumber(o.outputLen)} out, ${o.weights} weights, ${o.kvCache} KV cache; `,
        o.tp > 0 ? `tensor parallel over ${o.tp} chips a replica. ` : 'tensor parallel over the group size that is cheapest per token. ',
        'Batch is per replica; TTFT is one prompt\'s prefill without queueing, TPOT one decode step of the batch.');
  mount(body, reply.rows.map((row) => {
    const s = row.serving;
    const priced = s.maxBatch >= 1;
    return h('tr', {dataset: {type: row.acceleratorType, fits: String(s.fits)}, class: s.fits ? '' : 'muted'},
      h('th', {scope: 'row'}, row.acceleratorType),
      h('td', {class: 'num'}, priced ? `${s.tp} × ${s.replicas}` : '—'),
      h('td', {class: 'num'}, priced ? formatNumber(s.batch) : '—'),
      h('td', {class: 'num'}, formatNumber(s.maxBatch)),
      h('td', {class: 'num'}, priced ? formatSeconds(s.prefillSeconds) : '—'),
      h('td', {class: 'num'}, priced ? formatSeconds(s.decodeStepSeconds) : '—'),
      h('td', {class: 'num'}, priced ? formatNumber(Math.round(s.outputTokensPerSecondPerChip)) : '—'),
      h('td', {class: 'num'}, priced ? formatNumber(Math.round(s.decodeTokensPerSecondPerChip)) : '—'),
      h('td', {class: 'num'}, priced ? formatNumber(Math.round(s.prefillTokensPerSecondPerChip)) : '—'),
      h('td', {class: 'num'}, `${formatBytes(s.hbmPerChip.weights + s.hbmPerChip.kvCache)} / ${formatBytes(s.hbmPerChip.capacity)}`),
      h('td', {}, s.decodeBound || '—'),
      h('td', {class: 'num'}, formatDollars(s.usdPerMillionOutputTokens.onDemand)),
      h('td', {class: 'num'}, formatDollars(s.usdPerMillionOutputTokens.spot)),
      h('td', {class: 'wrap small'}, s.problem));
  }));
}
