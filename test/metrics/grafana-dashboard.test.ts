import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { projectRoot } from '../../src/platform/paths.js';

/** Metrics of the API documentation that the alert feature serves. */
const FROM_OTHER_FEATURES = ['hookprompt_alerts_firing'];

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}

const dashboard = JSON.parse(
  readFileSync(join(projectRoot, 'docs/grafana-dashboard.json'), 'utf8'),
) as { panels: Panel[]; templating: { list: { name: string }[] } };

describe('docs/grafana-dashboard.json', () => {
  it('queries only metrics the service serves, each of the delivery and AI metrics at least once', async () => {
    const served = (await new Metrics().registry.getMetricsAsJSON()).map((metric) => metric.name);
    const queries = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((t) => t.expr);
    const used = new Set(
      queries.flatMap((expr) =>
        [...expr.matchAll(/\b([a-z_]+_[a-z_]+)(?=\{|\[|\s*\))/g)]
          .map((match) => match[1] as string)
          .filter((name) => /^(hookprompt|process|nodejs)_/.test(name))
          .map((name) => name.replace(/_(bucket|count|sum)$/, '')),
      ),
    );
    for (const name of used) expect([...served, ...FROM_OTHER_FEATURES], name).toContain(name);
    for (const name of [
      'hookprompt_deliveries_total',
      'hookprompt_delivery_duration_seconds',
      'hookprompt_ai_calls_total',
      'hookprompt_ai_cost_usd_total',
      ...FROM_OTHER_FEATURES,
    ])
      expect([...used], name).toContain(name);
  });

  it('lets the importer choose the data source, job and instances', () => {
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual([
      'datasource',
      'job',
      'instance',
    ]);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row'))
      for (const { expr } of panel.targets ?? [])
        expect(expr, panel.title).toContain('job=~"$job",instance=~"$instance"');
  });
});
