// Workspace page: draws the AI usage table as three small charts, tokens, events and cost, each
// on its own axis (three units on one chart read as one scale). The table stays the source and
// works without this file (or without chart.js).
(function () {
  'use strict';
  var figures = document.querySelector('.usage-charts');
  var rows = document.querySelectorAll('#usage-days tbody tr');
  if (!figures || !rows.length || typeof window.Chart !== 'function') {
    if (figures) figures.hidden = true;
    return;
  }
  var days = [];
  var tokens = [];
  var events = [];
  var costs = [];
  rows.forEach(function (row) {
    days.push(row.getAttribute('data-day').slice(5));
    tokens.push(Number(row.getAttribute('data-tokens')));
    events.push(Number(row.getAttribute('data-events')));
    // An unknown cost is a gap in the line, not a 0.
    var cost = row.getAttribute('data-cost');
    costs.push(cost === '' ? null : Number(cost));
  });

  function draw(id, dataset, unit) {
    var canvas = document.getElementById(id);
    if (!canvas) return;
    new window.Chart(canvas, {
      type: dataset.type,
      data: { labels: days, datasets: [dataset] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        plugins: { legend: { display: false } },
        scales: {
          y: { beginAtZero: true, title: { display: true, text: unit } },
        },
      },
    });
  }

  draw(
    'usage-chart-tokens',
    {
      type: 'bar',
      label: 'Tokens',
      data: tokens,
      backgroundColor: '#4f6bed',
    },
    'tokens',
  );
  draw(
    'usage-chart-events',
    {
      type: 'bar',
      label: 'Events',
      data: events,
      backgroundColor: '#9a5b00',
    },
    'events',
  );
  draw(
    'usage-chart-cost',
    {
      type: 'line',
      label: 'Cost (USD)',
      data: costs,
      borderColor: '#1b7f3b',
      backgroundColor: '#1b7f3b',
      tension: 0.2,
    },
    'USD',
  );
})();
