// Brain Logs: the volume chart and the Live toggle. The page works without this file.
(function () {
  'use strict';

  var COLORS = {
    replied: '#2f9e6a',
    skipped: '#8a94a6',
    pending: '#d9a426',
    processing: '#3b7dd8',
    failed: '#d64545',
    rejected: '#a34fb5',
  };

  // Events per hour or day, stacked by status.
  var canvas = document.getElementById('volume-chart');
  if (canvas && window.Chart) {
    var volume = JSON.parse(canvas.getAttribute('data-volume'));
    var labels = volume.buckets.map(function (iso) {
      return volume.unit === 'hour' ? iso.slice(11, 16) : iso.slice(5, 10);
    });
    var datasets = Object.keys(COLORS)
      .filter(function (status) {
        return volume.series[status];
      })
      .map(function (status) {
        return {
          label: status,
          data: volume.series[status],
          backgroundColor: COLORS[status],
          stack: 'events',
        };
      });
    canvas.chart = new window.Chart(canvas, {
      type: 'bar',
      data: { labels: labels, datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        plugins: { legend: { display: false } },
        scales: {
          x: { stacked: true, grid: { display: false } },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
        },
      },
    });
  }

  // Live: new events are put on top, and rows change as their status does.
  var list = document.getElementById('event-list');
  var toggle = document.getElementById('live-toggle');
  if (!list || !toggle || !window.EventSource) return;
  // Only the first page shows the newest events; older pages stay as they are.
  var firstPage = !new URLSearchParams(location.search).has('cursor');
  toggle.hidden = false;
  var source = null;

  function setLive(on) {
    toggle.setAttribute('aria-pressed', on ? 'true' : 'false');
    toggle.textContent = on ? 'Live: on' : 'Live';
    try {
      sessionStorage.setItem('brain-logs-live', on ? '1' : '');
    } catch (e) {
      /* private mode */
    }
    if (on && !source) {
      source = new EventSource(list.getAttribute('data-stream'));
      source.addEventListener('event', onEvent);
    } else if (!on && source) {
      source.close();
      source = null;
    }
  }

  function onEvent(message) {
    var change = JSON.parse(message.data);
    var current = document.getElementById('event-' + change.id);
    if (!current && !firstPage) return;
    fetch('/logs/' + encodeURIComponent(change.id) + '/row', { credentials: 'same-origin' })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, 'text/html').querySelector('details');
        if (!fresh) return;
        fresh = document.adoptNode(fresh);
        var existing = document.getElementById('event-' + change.id);
        if (existing) {
          fresh.open = existing.open;
          existing.replaceWith(fresh);
          return;
        }
        var item = document.createElement('li');
        item.className = 'live-new';
        item.appendChild(fresh);
        list.insertBefore(item, list.firstChild);
        var empty = document.querySelector('.card.empty');
        if (empty) empty.remove();
        var total = document.getElementById('event-total');
        if (total && total.getAttribute('data-exact') === 'true') {
          var n = Number(total.textContent.replace(/,/g, '')) + 1;
          total.textContent = n.toLocaleString('en');
        }
      })
      .catch(function () {
        /* the next change of this event brings it again */
      });
  }

  toggle.addEventListener('click', function () {
    setLive(toggle.getAttribute('aria-pressed') !== 'true');
  });
  var remembered = '';
  try {
    remembered = sessionStorage.getItem('brain-logs-live') || '';
  } catch (e) {
    /* private mode */
  }
  if (remembered) setLive(true);
})();
