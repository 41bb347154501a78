// Brain Logs: the volume chart, the Live toggle and the detail beside the list. The page works
// without this file: each row links to its event's page, the filters and the chart are forms and
// <details>.
(function () {
  'use strict';

  var STATUSES = ['replied', 'skipped', 'filtered', 'pending', 'processing', 'failed', 'rejected'];
  var styles = getComputedStyle(document.documentElement);
  // The legend's swatches and the bars take their colours from the same CSS variables.
  function colourOf(status) {
    return styles.getPropertyValue('--status-' + status).trim() || '#8a94a6';
  }

  // On a phone the failure groups would push the list below the fold: they start folded there,
  // their summary line still saying how many; a wider screen shows them open.
  var failures = document.getElementById('failures');
  if (failures && window.matchMedia('(max-width: 600px)').matches) failures.open = false;

  var list = document.getElementById('event-list');
  var canvas = document.getElementById('volume-chart');
  var volume = canvas ? JSON.parse(canvas.getAttribute('data-volume')) : null;
  var chart = null;

  // Events per hour or day, stacked by status; a bar shows the events of its hour and status.
  // Chart.js (some 200 KB) is fetched only when the folded chart is first opened: most visits
  // read the list and never open it.
  var section = document.getElementById('volume');
  var chartScript = null;
  function openChart() {
    if (!canvas || chart) return;
    if (window.Chart) return drawChart();
    if (chartScript) return;
    chartScript = document.createElement('script');
    chartScript.src = '/vendor/chart.umd.js';
    chartScript.onload = drawChart;
    document.head.appendChild(chartScript);
  }
  if (section) {
    section.addEventListener('toggle', function () {
      if (section.open) openChart();
    });
    if (section.open) openChart();
  }

  function datasetOf(status) {
    return {
      label: status,
      data: volume.series[status],
      backgroundColor: colourOf(status),
      stack: 'events',
    };
  }
  function drawChart() {
    if (chart || !window.Chart) return;
    var labels = volume.buckets.map(function (iso) {
      return volume.unit === 'hour' ? iso.slice(11, 16) : iso.slice(5, 10);
    });
    // The datasets share volume.series's arrays, so Live's counts made before the chart was
    // drawn are in it.
    var datasets = STATUSES.filter(function (status) {
      return volume.series[status];
    }).map(datasetOf);
    chart = canvas.chart = new window.Chart(canvas, {
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
        onClick: function (_event, elements) {
          if (!elements.length) return;
          var hit = elements[0];
          location.href = bucketUrl(hit.index, chart.data.datasets[hit.datasetIndex].label);
        },
      },
    });
  }

  function bucketUrl(index, status) {
    var from = new Date(volume.buckets[index]);
    var to = new Date(from.getTime() + (volume.unit === 'hour' ? 3600000 : 86400000));
    var params = new URLSearchParams(location.search);
    ['cursor', 'since', 'from', 'to', 'status'].forEach(function (name) {
      params.delete(name);
    });
    params.set('from', from.toISOString().slice(0, 19));
    params.set('to', to.toISOString().slice(0, 19));
    params.set('status', status);
    return '/logs?' + params.toString();
  }

  // Live: an event counted once in its hour's bar, under its status of the moment.
  var counted = {};
  function countInChart(change) {
    if (!volume || !change.received_at) return;
    var bucket = bucketIso(new Date(change.received_at));
    var index = volume.buckets.indexOf(bucket);
    if (index < 0) return;
    var row = document.getElementById('event-' + change.id);
    var before = counted[change.id] || (row ? row.getAttribute('data-status') : null);
    if (before === change.status) return;
    if (before) bump(before, index, -1);
    else addToTotal('volume-total', 1);
    bump(change.status, index, 1);
    counted[change.id] = change.status;
    if (chart) chart.update();
  }
  function bucketIso(date) {
    var iso = date.toISOString();
    return volume.unit === 'hour' ? iso.slice(0, 13) + ':00:00Z' : iso.slice(0, 10) + 'T00:00:00Z';
  }
  function bump(status, index, by) {
    var data = volume.series[status];
    if (!data) {
      data = volume.series[status] = volume.buckets.map(function () {
        return 0;
      });
      if (chart) chart.data.datasets.push(datasetOf(status));
    }
    data[index] = Math.max(0, data[index] + by);
    var total = document.querySelector('[data-status-total="' + status + '"]');
    if (total) total.textContent = String(Math.max(0, Number(total.textContent) + by));
  }
  function addToTotal(id, by) {
    var total = document.getElementById(id);
    if (total) total.textContent = String(Number(total.textContent) + by);
  }

  // The detail beside the list: a click or Enter on a row opens it, j and k move through rows.
  var layout = document.querySelector('.logs-layout');
  var pane = document.getElementById('event-detail');
  var wide = window.matchMedia('(min-width: 1100px)');
  var shownId = null;

  function rows() {
    return Array.prototype.slice.call(list ? list.querySelectorAll('.event-row') : []);
  }
  function select(row) {
    rows().forEach(function (other) {
      if (other !== row) other.removeAttribute('aria-current');
    });
    row.setAttribute('aria-current', 'true');
  }
  function openDetail(row) {
    select(row);
    var link = row.querySelector('.row-link');
    var id = row.getAttribute('data-event-id');
    shownId = id;
    return fetch(link.getAttribute('data-panel'), { credentials: 'same-origin' })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html === null || shownId !== id) return;
        pane.innerHTML = html;
        pane.hidden = false;
        layout.classList.add('has-detail');
      })
      .catch(function () {
        location.href = link.href;
      });
  }
  function closeDetail() {
    pane.hidden = true;
    pane.innerHTML = '';
    layout.classList.remove('has-detail');
    shownId = null;
    var current = list && list.querySelector('.event-row[aria-current]');
    if (current) {
      current.removeAttribute('aria-current');
      current.querySelector('.row-link').focus();
    }
  }
  function move(step) {
    var all = rows();
    if (!all.length) return;
    var current = list.querySelector('.event-row[aria-current]');
    var focused = document.activeElement && document.activeElement.closest('.event-row');
    var from = all.indexOf(current || focused);
    var next = all[Math.min(all.length - 1, Math.max(0, from < 0 ? 0 : from + step))];
    next.querySelector('.row-link').focus();
    if (wide.matches) openDetail(next);
    else select(next);
  }

  if (list && pane && layout) {
    list.addEventListener('click', function (event) {
      var link = event.target.closest('.row-link');
      // A narrow screen, or a click meant for a new tab, follows the link to the event page.
      if (!link || !wide.matches || event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      openDetail(link.closest('.event-row'));
    });
    pane.addEventListener('click', function (event) {
      if (event.target.closest('[data-detail-close]')) closeDetail();
    });
    document.addEventListener('keydown', function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var target = event.target;
      if (target.closest('input, select, textarea, [contenteditable]')) return;
      if (event.key === 'j') move(1);
      else if (event.key === 'k') move(-1);
      else if (event.key === 'Escape' && !pane.hidden) closeDetail();
    });
  }

  // Live: new events are put on top, and rows change as their status does.
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
    countInChart(change);
    fetch('/logs/' + encodeURIComponent(change.id) + '/row', { credentials: 'same-origin' })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var template = document.createElement('template');
        template.innerHTML = html.trim();
        var fresh = template.content.querySelector('.event-row');
        if (!fresh) return;
        var existing = document.getElementById('event-' + change.id);
        if (existing) {
          if (existing.hasAttribute('aria-current')) fresh.setAttribute('aria-current', 'true');
          if (existing.classList.contains('live-new')) fresh.classList.add('live-new');
          existing.replaceWith(fresh);
          if (shownId === change.id) openDetail(fresh);
          return;
        }
        fresh.classList.add('live-new');
        list.insertBefore(fresh, list.firstChild);
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
