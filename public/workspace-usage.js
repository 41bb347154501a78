// Workspace page: draws the AI usage table as a chart. The table stays the source and works
// without this file (or without chart.js).
(function () {
  'use strict';
  var canvas = document.getElementById('usage-chart');
  var rows = document.querySelectorAll('#usage-days tbody tr');
  if (!canvas || !rows.length || typeof window.Chart !== 'function') {
    if (canvas) canvas.hidden = true;
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
  new window.Chart(canvas, {
    data: {
      labels: days,
      datasets: [
        {
          type: 'bar',
          label: 'Tokens',
          data: tokens,
          yAxisID: 'tokens',
          backgroundColor: '#4f6bed',
        },
        {
          type: 'line',
          label: 'Events',
          data: events,
          yAxisID: 'events',
          borderColor: '#9a5b00',
          backgroundColor: '#9a5b00',
          tension: 0.2,
        },
        {
          type: 'line',
          label: 'Cost (USD)',
          data: costs,
          yAxisID: 'usd',
          borderColor: '#1b7f3b',
          backgroundColor: '#1b7f3b',
          borderDash: [4, 3],
          tension: 0.2,
        },
      ],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: 'index', intersect: false },
      scales: {
        tokens: {
          type: 'linear',
          position: 'left',
          beginAtZero: true,
          title: { display: true, text: 'tokens' },
        },
        events: {
          type: 'linear',
          position: 'right',
          beginAtZero: true,
          grid: { drawOnChartArea: false },
          title: { display: true, text: 'events' },
        },
        usd: {
          type: 'linear',
          position: 'right',
          beginAtZero: true,
          grid: { drawOnChartArea: false },
          title: { display: true, text: 'USD' },
        },
      },
    },
  });
})();
