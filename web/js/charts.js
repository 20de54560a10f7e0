// Charts: Chart.js 3 from Debian's libjs-chart.js, which tpuemud serves at /vendor/chart.js/.
// lineChart() creates or updates the chart on a canvas in place (no flicker on refresh);
// sparkline() is a tiny inline SVG for table cells, cheap enough for one per row.
import {Chart, registerables} from '/vendor/chart.js/chart.mjs';

Chart.register(...registerables);
Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily;
Chart.defaults.color = '#3c4043';
Chart.defaults.animation = false;  // live data: redraw at once
Chart.defaults.maintainAspectRatio = false;

const kPalette = ['#1a73e8', '#e37400', '#188038', '#a142f4', '#d93025', '#007b83'];

// series: [{label, data: [numbers]}]; labels: x labels. options: {yMax, yLabel, percent, log}
export function lineChart(canvas, labels, series, options = {}) {
  const datasets = series.map((s, i) => ({
    label: s.label,
    data: s.data,
    borderColor: kPalette[i % kPalette.length],
    backgroundColor: kPalette[i % kPalette.length] + '22',
    borderWidth: 2,
    pointRadius: s.data.length > 60 ? 0 : 2,
    fill: Boolean(options.fill),
    tension: 0.2,
  }));
  const existing = Chart.getChart(canvas);
  if (existing) {
    existing.data.labels = labels;
    existing.data.datasets = datasets;
    existing.update('none');
    return existing;
  }
  const y = {
    beginAtZero: true,
    title: {display: Boolean(options.yLabel), text: options.yLabel},
  };
  if (options.log) y.type = 'logarithmic';
  if (options.yMax !== undefined) y.max = options.yMax;
  if (options.percent) y.ticks = {callback: (v) => `${Math.round(v * 100)}%`};
  return new Chart(canvas, {
    type: 'line',
    data: {labels, datasets},
    options: {
      responsive: true,
      interaction: {mode: 'index', intersect: false},
      plugins: {legend: {display: series.length > 1, position: 'bottom'}},
      scales: {
        x: {title: {display: Boolean(options.xLabel), text: options.xLabel},
            ticks: {maxTicksLimit: 8, maxRotation: 0}},
        y,
      },
    },
  });
}

// series: [{label, data, color?}]. options: {horizontal, stacked, valueLabel, log (y axis)}
export function barChart(canvas, labels, series, options = {}) {
  const datasets = series.map((s, i) => ({
    label: s.label,
    data: s.data,
    backgroundColor: s.color || kPalette[i % kPalette.length],
    maxBarThickness: 28,
  }));
  const existing = Chart.getChart(canvas);
  if (existing) {
    existing.data.labels = labels;
    existing.data.datasets = datasets;
    existing.update('none');
    return existing;
  }
  return new Chart(canvas, {
    type: 'bar',
    data: {labels, datasets},
    options: {
      indexAxis: options.horizontal ? 'y' : 'x',
      responsive: true,
      plugins: {legend: {display: series.length > 1, position: 'bottom'}},
      scales: {
        x: {stacked: Boolean(options.stacked), beginAtZero: true,
            title: {display: Boolean(options.valueLabel && options.horizontal), text: options.valueLabel}},
        y: {stacked: Boolean(options.stacked), beginAtZero: !options.log, type: options.log ? 'logarithmic' : 'linear',
            title: {display: Boolean(options.valueLabel && !options.horizontal), text: options.valueLabel}},
      },
    },
  });
}

// Destroys every chart under `root` (a page going away).
export function destroyCharts(root) {
  for (const canvas of root.querySelectorAll('canvas')) Chart.getChart(canvas)?.destroy();
}

// values in [0, 1] -> an SVG polyline 100x24; an empty series draws a flat dashed line.
export function sparkline(values, label) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 100 24');
  svg.setAttribute('class', 'sparkline');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  const line = document.createElementNS(ns, 'polyline');
  if (!values.length) {
    line.setAttribute('points', '0,23 100,23');
    line.setAttribute('class', 'sparkline-empty');
  } else {
    const n = values.length;
    const points = values.map((v, i) => {
      const x = n === 1 ? 100 : (i / (n - 1)) * 100;
      const y = 23 - Math.max(0, Math.min(1, v)) * 22;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    });
    if (n === 1) points.unshift(`0,${points[0].split(',')[1]}`);
    line.setAttribute('points', points.join(' '));
  }
  svg.append(line);
  return svg;
}

export {Chart};
