// Progressive enhancement for the hookprompt panel. Every page works without this file.
(function () {
  'use strict';
  document.documentElement.classList.add('js');

  // The channel editor's section tabs: anchors that work without this file; here the tab of the
  // section the address points at is marked, on load and on every change of the hash.
  var sectionTabs = document.querySelector('[data-section-tabs]');
  if (sectionTabs) {
    var markSectionTab = function () {
      sectionTabs.querySelectorAll('a').forEach(function (tab) {
        if (tab.getAttribute('href') === location.hash)
          tab.setAttribute('aria-current', 'location');
        else tab.removeAttribute('aria-current');
      });
    };
    window.addEventListener('hashchange', markSectionTab);
    markSectionTab();
  }

  // Copy buttons: <button data-copy="#input-id">.
  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-copy]');
    if (!button) return;
    var field = document.querySelector(button.getAttribute('data-copy'));
    if (!field) return;
    var text = field.value !== undefined ? field.value : field.textContent;
    var done = function () {
      var label = button.textContent;
      button.textContent = 'Copied';
      setTimeout(function () {
        button.textContent = label;
      }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {
        selectAndCopy(field, done);
      });
    } else {
      selectAndCopy(field, done);
    }
  });

  // Plain http on a remote host has no clipboard API: fall back to selecting the text.
  function selectAndCopy(field, done) {
    // A masked secret cannot be copied as it is shown: it is unmasked for the copy only.
    var masked = field.type === 'password';
    if (masked) field.type = 'text';
    if (field.select) field.select();
    try {
      if (document.execCommand('copy')) done();
    } catch (e) {
      /* the text stays selected for a manual copy */
    }
    if (masked) field.type = 'password';
  }

  // The workspace selector switches as soon as another workspace is chosen.
  document.querySelectorAll('select[data-autosubmit]').forEach(function (select) {
    select.addEventListener('change', function () {
      select.form.submit();
    });
  });

  // Forms that need a second thought: <form data-confirm="Revoke this key?">.
  document.addEventListener('submit', function (event) {
    var message = event.target.getAttribute('data-confirm');
    if (message && !window.confirm(message)) event.preventDefault();
  });

  // Channel editor: refresh the server-rendered preview while the template or sample is edited.
  var form = document.querySelector('form[data-live-preview]');
  if (form) {
    var timer;
    var sequence = 0;
    var refresh = function () {
      var mine = ++sequence;
      var body = new URLSearchParams(new FormData(form));
      fetch(form.getAttribute('data-live-preview'), {
        method: 'POST',
        body: body,
        headers: { Accept: 'text/html' },
        credentials: 'same-origin',
      })
        .then(function (response) {
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          if (!html || mine !== sequence) return;
          var page = new DOMParser().parseFromString(html, 'text/html');
          ['#preview', '#placeholders'].forEach(function (selector) {
            var fresh = page.querySelector(selector);
            var current = document.querySelector(selector);
            if (fresh && current) current.replaceWith(document.adoptNode(fresh));
          });
        })
        .catch(function () {
          /* the Preview button still works */
        });
    };
    form.addEventListener('input', function (event) {
      if (!event.target.matches('[data-preview-input]')) return;
      clearTimeout(timer);
      timer = setTimeout(refresh, 350);
    });
  }

  // "Who may send": the guide follows the scheme picked, before the form is saved.
  var scheme = document.getElementById('scheme');
  if (scheme) {
    var showSchemeFields = function () {
      document.querySelectorAll('.scheme-guide-item').forEach(function (item) {
        item.classList.toggle('current', item.getAttribute('data-scheme') === scheme.value);
      });
      // Only the fields the chosen scheme uses.
      document.querySelectorAll('[data-schemes]').forEach(function (field) {
        var schemes = field.getAttribute('data-schemes').split(' ');
        field.hidden = schemes.indexOf(scheme.value) < 0;
      });
    };
    scheme.addEventListener('change', showSchemeFields);
    showSchemeFields();
  }
  // A field that matters for one choice of a select only: <div data-shown-for="select_id=value">
  // (the channel editor's schema box, for "JSON matching a schema"). Shown without this file.
  document.querySelectorAll('[data-shown-for]').forEach(function (field) {
    var rule = field.getAttribute('data-shown-for').split('=');
    var select = document.getElementById(rule[0]);
    if (!select) return;
    var showField = function () {
      field.hidden = select.value !== rule[1];
    };
    select.addEventListener('change', showField);
    showField();
  });
  // A form for things of several kinds (destinations, tools): only the fieldset of the kind picked.
  // A form with two pickers (an alert's condition and where it tells) names each one's group:
  // <select data-kind-select="notify"> shows the fieldsets of data-kind-group="notify".
  document.querySelectorAll('[data-kind-select]').forEach(function (kind) {
    var group = kind.getAttribute('data-kind-select');
    var showKindFields = function () {
      kind.form.querySelectorAll('[data-kind-fields]').forEach(function (fieldset) {
        if ((fieldset.getAttribute('data-kind-group') || '') !== group) return;
        fieldset.hidden = fieldset.getAttribute('data-kind-fields') !== kind.value;
      });
    };
    kind.addEventListener('change', showKindFields);
    showKindFields();
  });
  // A form shown again with errors: its summary at the top is read first, each error a link.
  var summary = document.getElementById('error-summary');
  if (summary) summary.focus();
  // Secrets stay masked until asked for: a Show button beside each (hidden without this file).
  document.querySelectorAll('[data-reveal]').forEach(function (button) {
    var field = document.querySelector(button.getAttribute('data-reveal'));
    if (!field) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var shown = field.type === 'password';
      field.type = shown ? 'text' : 'password';
      button.textContent = shown ? 'Hide' : 'Show';
      button.setAttribute('aria-pressed', shown ? 'true' : 'false');
    });
  });
})();
