// Channels: a 24-hour sparkline per channel. The counts beside it work without this file.
(function () {
  'use strict';
  if (!window.Chart) return;
  document.querySelectorAll('canvas.sparkline').forEach(function (canvas) {
    var hourly = JSON.parse(canvas.getAttribute('data-hourly'));
    canvas.chart = new window.Chart(canvas, {
      type: 'line',
      data: {
        labels: hourly.map(function (_count, i) {
          return 23 - i + ' h ago';
        }),
        datasets: [
          {
            data: hourly,
            borderColor: '#3b7dd8',
            backgroundColor: 'rgba(59, 125, 216, 0.15)',
            fill: true,
            pointRadius: 0,
            borderWidth: 1.5,
            tension: 0.3,
          },
        ],
      },
      options: {
        animation: false,
        responsive: false,
        plugins: { legend: { display: false }, tooltip: { enabled: true } },
        scales: { x: { display: false }, y: { display: false, beginAtZero: true } },
      },
    });
  });
})();
