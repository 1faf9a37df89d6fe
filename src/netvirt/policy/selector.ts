/**
 * Kubernetes label selectors (`matchLabels` and `matchExpressions` with In, NotIn, Exists,
 * DoesNotExist), evaluated by odlcoe: NetVirt only ever sees the resulting memberships.
 * Semantics of apimachinery's `LabelSelectorAsSelector`: an empty selector selects everything,
 * requirements are AND'ed, NotIn and DoesNotExist hold for an absent label.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';
import { canonicalJson } from '../json.js';

export type Labels = Readonly<Record<string, string>>;

/** Thrown for a selector the API server would have refused (an unknown operator, In without values). */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

export function checkSelector(selector: V1LabelSelector, where: string): void {
  for (const [i, e] of (selector.matchExpressions ?? []).entries()) {
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          throw new SelectorError(`${where}.matchExpressions[${i}]: ${e.operator} needs values`);
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          throw new SelectorError(`${where}.matchExpressions[${i}]: ${e.operator} takes no values`);
        break;
      default:
        throw new SelectorError(
          `${where}.matchExpressions[${i}]: unknown operator ${JSON.stringify(e.operator)}`,
        );
    }
  }
}

export function selectorMatches(selector: V1LabelSelector, labels: Labels | undefined): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(l[e.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** One spelling per meaning (member order and duplicate values do not count), for naming groups. */
export function canonicalSelector(selector: V1LabelSelector): string {
  const exprs = (selector.matchExpressions ?? [])
    .map((e) => ({ k: e.key, o: e.operator, v: [...new Set(e.values ?? [])].sort() }))
    .sort((a, b) => canonicalJson(a).localeCompare(canonicalJson(b)));
  return canonicalJson({ l: selector.matchLabels ?? {}, e: exprs });
}
