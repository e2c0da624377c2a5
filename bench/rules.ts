/**
 * `npm run bench -- --rules`: the 1-event and returning-visitor scenarios once more with ten enabled
 * profile rules on their event type (`page-view`), so that their ratios to the bare server can be
 * set beside those without rules of the same run. The two are measured in turn, round by round
 * (bench/measure.ts); the rules are made before each block of legs with rules and deleted after it.
 * Every request with rules runs all ten, and each changes the profile (an increment).
 */
import { apiJson, apiRequest, type Child } from './processes.js';
import type { Scenario } from './scenarios.js';
import type { ScenarioSummary } from './summary.js';

/** The scenarios that get a variant with rules. */
export const WITH_RULES = ['1-event', 'returning-visitor'];

/** The ten rules, each with one operation, and each request changes its profile (the increments). */
export const RULES = [
  [{ op: 'increment', path: 'traits.public.page_views' }],
  [{ op: 'set', path: 'traits.public.last_page', from: 'properties.path' }],
  [{ op: 'set_once', path: 'traits.public.first_page', from: 'properties.path' }],
  [{ op: 'append', path: 'traits.public.pages', from: 'properties.path' }],
  [{ op: 'set', path: 'traits.public.last_url', from: 'context.page.url' }],
  [{ op: 'set', path: 'traits.public.last_title', from: 'context.page.title' }],
  [{ op: 'add_segment', value: 'visitors' }],
  [{ op: 'increment', path: 'interests.browsing', value: 0.5 }],
  [{ op: 'set', path: 'traits.private.language', from: 'context.browser.local.browser.language' }],
  [{ op: 'set', path: 'consents.analytics', value: true }],
].map((operations, i) => ({
  id: `bench-rule-${i}`,
  name: `bench rule ${i}`,
  event_type: 'page-view',
  operations,
}));

/** The scenario with the ten rules saved during its legs (and deleted between them). */
function withRules(scenario: Scenario): Scenario {
  return {
    ...scenario,
    name: `${scenario.name}+rules`,
    description: `${scenario.description}; ten enabled profile rules on page-view`,
    async prepare(service: Child, sourceId: string) {
      const prepared = await scenario.prepare(service, sourceId);
      return {
        ...prepared,
        async during() {
          const undo = await prepared.during?.();
          for (const rule of RULES) await apiJson(service, 'POST', '/profile-rule', rule);
          return async () => {
            for (const rule of RULES) await apiRequest(service, 'DELETE', `/profile-rule/${rule.id}`);
            await undo?.();
          };
        },
      };
    },
  };
}

/**
 * The selected scenarios as groups measured in turn (bench/measure.ts): each of WITH_RULES with its
 * variant with rules, every other scenario alone.
 */
export function addRuleScenarios(selected: Scenario[]): Scenario[][] {
  return selected.map((s) => (WITH_RULES.includes(s.name) ? [s, withRules(s)] : [s]));
}

/** A share to three decimals, rounded down: one just under the target never shows as on it. */
const down = (share: number): string => (Math.floor(share * 1000) / 1000).toFixed(3);

/** The share of its scenario's ratio to the bare server a `+rules` variant must keep. */
export const KEPT_TARGET = 0.85;

/**
 * Adds to each `+rules` summary the target of the ten rules: the share it keeps of its scenario's
 * ratio to the bare server, in the same run; its requests/s against the scenario's beside it.
 */
export function checkKept(summaries: ScenarioSummary[]): void {
  for (const variant of summaries) {
    const base = summaries.find((s) => `${s.name}+rules` === variant.name);
    if (!base?.service || !base.bare || !variant.service || !variant.bare) continue;
    const ratio = (s: ScenarioSummary) => s.service!.requestsPerSec / s.bare!.requestsPerSec;
    const kept = ratio(variant) / ratio(base);
    const served = variant.service.requestsPerSec / base.service.requestsPerSec;
    (variant.targets ??= []).push({
      target: `ratio kept with rules >= ${KEPT_TARGET}`,
      value: `${down(kept)}; requests/s ${down(served)}`,
      pass: kept >= KEPT_TARGET,
    });
  }
}
