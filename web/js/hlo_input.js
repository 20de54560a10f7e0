// The HLO part of the job submit form: a text area for a pasted XLA HLO module, a file input
// that reads a module file into it, and "estimate only". The JSON editor keeps the rest of the
// spec ({"hlo": {...}, "steps": 1}); apply() puts the module text and the choice into it.
import {field, h} from './dom.js';

// A small module for the preset: a dense layer and a ReLU, with JAX-style op_name metadata.
export const kSampleHlo = `HloModule jit_dense_relu

ENTRY %main (x: f32[8,16], w: f32[16,4]) -> f32[8,4] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16,4]{1,0} parameter(1)
  %dot.1 = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(dense)/dot_general"}
  %zero = f32[] constant(0)
  %zeros = f32[8,4]{1,0} broadcast(%zero), dimensions={}
  ROOT %relu.2 = f32[8,4]{1,0} maximum(%dot.1, %zeros), metadata={op_name="jit(dense)/relu"}
}
`;

export function hloInput() {
  const text = h('textarea', {id: 'job-hlo', name: 'hlo', rows: 10, spellcheck: 'false', class: 'code',
                              placeholder: 'HloModule … or module @jit_f … (HLO text, or the StableHLO jax.jit(f).lower(x).as_text() prints)'});
  const status = h('span', {id: 'job-hlo-status', class: 'hint', 'aria-live': 'polite'});
  const file = h('input', {id: 'job-hlo-file', name: 'hloFile', type: 'file', accept: '.hlo,.mlir,.txt,text/plain'});
  file.addEventListener('change', async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    text.value = await chosen.text();
    status.textContent = `Read ${chosen.name} (${chosen.size} bytes)`;
  });
  const estimate = h('input', {id: 'job-hlo-estimate', name: 'estimateOnly', type: 'checkbox'});
  const element = h('div', {id: 'hlo-fields'},
                    field('HLO module (paste it, or choose a file)', text),
                    h('div', {class: 'form-row'}, field('HLO file', file), status,
                      h('label', {class: 'check'}, estimate, ' Estimate only (price without running)')));
  return {
    element,
    show(visible) {
      element.hidden = !visible;
      if (visible && !text.value) text.value = kSampleHlo;
    },
    // Puts the module and the estimate choice into `spec` (a parsed JSON spec); the editor's own
    // hlo.text wins when the text area is empty.
    apply(spec) {
      if (element.hidden) return spec;
      const hlo = {...(spec.hlo || {})};
      if (text.value.trim()) hlo.text = text.value;
      if (estimate.checked) hlo.estimateOnly = true;
      return {...spec, hlo};
    },
    // Keeps what was typed when the form is rebuilt.
    copyFrom(old) {
      if (!old) return;
      text.value = old.querySelector('#job-hlo')?.value ?? text.value;
      estimate.checked = old.querySelector('#job-hlo-estimate')?.checked ?? false;
    },
  };
}
