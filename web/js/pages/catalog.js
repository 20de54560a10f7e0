// Catalog: the accelerator types each zone offers, with the hardware the engine models for them
// (GET /_emulator/hardware): chips, hosts, TensorCores, MXUs, HBM, clock, peak bf16 TFLOPS.
import * as data from '../data.js';
import {emptyRow, errorBox, field, formatBytes, formatNumber, h, mount} from '../dom.js';

export default {
  title: 'Catalog',
  async render(root, params) {
    const errors = h('div');
    const zone = h('select', {id: 'catalog-zone', name: 'zone'});
    const body = h('tbody');
    const note = h('p', {class: 'muted small'});
    mount(root, h('h1', {}, 'Catalog'),
          h('p', {class: 'muted'}, 'Accelerator types per zone and the hardware the emulator models for each ',
            '(figures from engine/hardware/hardware.cpp; peak TFLOPS is derived from TensorCores × MXUs × MXU size² × clock).'),
          errors,
          h('section', {class: 'card', 'aria-labelledby': 'catalog-title'},
            h('div', {class: 'title-row'}, h('h2', {id: 'catalog-title'}, 'Accelerator types'),
              h('div', {class: 'filters'}, field('Zone', zone))),
            h('div', {class: 'scroll'},
              h('table', {id: 'catalog-table', class: 'compact'},
                h('thead', {}, h('tr', {}, ['Accelerator type', 'Generation', 'Topology', 'Chips', 'Hosts', 'TensorCores',
                                            'MXUs', 'MXU', 'HBM', 'Clock', 'Peak bf16 TFLOPS', 'Zones']
                                               .map((t, i) => h('th', {scope: 'col', class: i >= 3 && i <= 10 ? 'num' : ''}, t)))),
                body)),
            note));

    let hw, zones;
    try {
      [hw, zones] = await Promise.all([data.hardware(), data.zones()]);
    } catch (e) {
      mount(errors, errorBox(e));
      return {};
    }
    mount(zone, h('option', {value: ''}, 'All zones'), zones.map((z) => h('option', {value: z}, z)));
    zone.value = params.zone && zones.includes(params.zone) ? params.zone : '';

    function show() {
      if (!hw) {
        mount(body, emptyRow(12, 'The hardware endpoint (/_emulator/hardware) is not served by this tpuemud.'));
        return;
      }
      const types = hw.types.filter((t) => zone.value ? t.zones.includes(zone.value) : t.zones.length);
      mount(body, types.length ? types.map((t) => h('tr', {dataset: {type: t.acceleratorType}},
          h('th', {scope: 'row'}, t.acceleratorType), h('td', {}, t.generation), h('td', {}, t.topology),
          h('td', {class: 'num'}, formatNumber(t.chips)), h('td', {class: 'num'}, formatNumber(t.hosts)),
          h('td', {class: 'num'}, formatNumber(t.tensorcores)),
          h('td', {class: 'num', title: `${t.mxusPerTensorcore} per TensorCore`},
            `${formatNumber(t.mxus)} (${t.mxusPerTensorcore}/TC)`),
          h('td', {class: 'num'}, `${t.mxuSize}×${t.mxuSize}`), h('td', {class: 'num'}, formatBytes(t.hbmBytes)),
          h('td', {class: 'num'}, `${(t.clockHz / 1e9).toFixed(2)} GHz`),
          h('td', {class: 'num'}, t.peakBf16Tflops.toLocaleString('en-US', {maximumFractionDigits: 1})),
          h('td', {class: 'wrap small'}, zone.value ? t.zones.length : t.zones.join(', '))))
        : emptyRow(12, 'This zone offers no accelerator types.'));
      mount(note, `${types.length} accelerator types${zone.value ? ` in ${zone.value}` : ''}. ` +
                  `Each zone holds ${formatNumber(hw.zoneCapacityTensorcores)} TensorCores in this tpuemud.`);
    }
    zone.addEventListener('change', () => {
      window.history.replaceState(null, '', zone.value ? `#/catalog?zone=${zone.value}` : '#/catalog');
      show();
    });
    show();
    return {};
  },
};
