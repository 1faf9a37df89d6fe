/**
 * Label and field selectors with the API server's grammar and meaning. Parsing happens once
 * per request; the parsed selector is a plain predicate, cheap enough to run for every object
 * of a 10,000-pod list and for every event of every watch.
 */
import type { KubeObject, ResourceType } from './resources.js';
import { labelValueError, qualifiedNameError } from './names.js';
import { badRequest } from './status.js';

export type LabelOperator = 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** Matches an object (by its labels and fields) or not. */
export type ObjectPredicate = (obj: KubeObject) => boolean;

type Token =
  | { kind: 'word'; text: string }
  | { kind: 'op'; text: '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '>' | '<' };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i] as string;
    if (c === ' ' || c === '\t') {
      i += 1;
    } else if (input.startsWith('==', i) || input.startsWith('!=', i)) {
      tokens.push({ kind: 'op', text: input.slice(i, i + 2) as '==' | '!=' });
      i += 2;
    } else if ('=!(),<>'.includes(c)) {
      tokens.push({ kind: 'op', text: c as '=' | '!' | '(' | ')' | ',' | '<' | '>' });
      i += 1;
    } else {
      let j = i;
      while (j < input.length && !' \t=!(),<>'.includes(input[j] as string)) j += 1;
      tokens.push({ kind: 'word', text: input.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

function selectorError(selector: string, why: string): Error {
  return badRequest(`unable to parse requirement: ${why} (in label selector "${selector}")`);
}

/** Parses a label selector (`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`); throws 400 on bad input. */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  const tokens = tokenize(selector);
  const requirements: LabelRequirement[] = [];
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const word = (what: string): string => {
    const t = tokens[i];
    if (t?.kind !== 'word') throw selectorError(selector, `expected ${what}`);
    i += 1;
    return t.text;
  };
  const checkKey = (key: string): string => {
    const why = qualifiedNameError(key);
    if (why) throw selectorError(selector, `invalid label key "${key}": ${why}`);
    return key;
  };
  const checkValue = (value: string): string => {
    const why = labelValueError(value);
    if (why) throw selectorError(selector, `invalid label value "${value}": ${why}`);
    return value;
  };
  while (i < tokens.length) {
    const first = peek();
    if (first?.kind === 'op' && first.text === '!') {
      i += 1;
      requirements.push({ key: checkKey(word('a label key after "!"')), operator: '!exists', values: [] });
    } else {
      const key = checkKey(word('a label key'));
      const next = peek();
      if (next === undefined || (next.kind === 'op' && next.text === ',')) {
        requirements.push({ key, operator: 'exists', values: [] });
      } else if (next.kind === 'op' && (next.text === '=' || next.text === '==' || next.text === '!=')) {
        i += 1;
        // `a=` selects an empty value; the value token is optional.
        const valueToken = peek();
        const value = valueToken?.kind === 'word' ? (i++, valueToken.text) : '';
        requirements.push({ key, operator: next.text === '!=' ? '!=' : '=', values: [checkValue(value)] });
      } else if (next.kind === 'op' && (next.text === '>' || next.text === '<')) {
        i += 1;
        const value = word('an integer');
        if (!/^-?\d+$/.test(value))
          throw selectorError(selector, `for '${next.text}' operator, the value must be an integer`);
        requirements.push({ key, operator: next.text === '>' ? 'gt' : 'lt', values: [value] });
      } else if (next.kind === 'word' && (next.text === 'in' || next.text === 'notin')) {
        i += 1;
        const open = peek();
        if (open?.kind !== 'op' || open.text !== '(')
          throw selectorError(selector, `expected "(" after ${next.text}`);
        i += 1;
        const values: string[] = [];
        while (true) {
          const t = peek();
          if (t?.kind === 'word') {
            values.push(checkValue(t.text));
            i += 1;
          } else if (t?.kind === 'op' && t.text === ',' && values.length > 0) {
            // An empty string between commas is a legal (empty) value, as in `a in (x,)`.
            i += 1;
            const after = peek();
            if (after?.kind === 'op' && (after.text === ',' || after.text === ')')) values.push('');
          } else if (t?.kind === 'op' && t.text === ')') {
            i += 1;
            break;
          } else {
            throw selectorError(selector, `expected a value or ")" in ${next.text} (...)`);
          }
        }
        if (values.length === 0)
          throw selectorError(selector, `for '${next.text}' operator, at least one value must be specified`);
        requirements.push({ key, operator: next.text, values });
      } else {
        throw selectorError(selector, `unexpected "${next.text}" after label key "${key}"`);
      }
    }
    const sep = peek();
    if (sep === undefined) break;
    if (sep.kind !== 'op' || sep.text !== ',')
      throw selectorError(selector, `expected "," but found "${sep.text}"`);
    i += 1;
    if (i === tokens.length) throw selectorError(selector, 'found trailing ","');
  }
  return requirements;
}

/** Whether labels satisfy every requirement (`!=` and `notin` also match a missing label). */
export function labelsMatch(
  requirements: readonly LabelRequirement[],
  labels: Record<string, string> | undefined,
): boolean {
  for (const r of requirements) {
    const value = labels?.[r.key];
    switch (r.operator) {
      case 'exists':
        if (value === undefined) return false;
        break;
      case '!exists':
        if (value !== undefined) return false;
        break;
      case '=':
        if (value !== r.values[0]) return false;
        break;
      case '!=':
        if (value === r.values[0]) return false;
        break;
      case 'in':
        if (value === undefined || !r.values.includes(value)) return false;
        break;
      case 'notin':
        if (value !== undefined && r.values.includes(value)) return false;
        break;
      case 'gt':
      case 'lt': {
        if (value === undefined || !/^-?\d+$/.test(value)) return false;
        const have = Number(value);
        const want = Number(r.values[0]);
        if (r.operator === 'gt' ? !(have > want) : !(have < want)) return false;
        break;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** Splits on unescaped commas; `\,`, `\=` and `\\` escape those characters in values. */
function splitFieldTerms(selector: string): string[] {
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i] as string;
    if (c === '\\' && i + 1 < selector.length) {
      current += c + (selector[i + 1] as string);
      i += 1;
    } else if (c === ',') {
      terms.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  terms.push(current);
  return terms;
}

function unescapeFieldValue(value: string, selector: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (c === '\\') {
      const next = value[i + 1];
      if (next !== '\\' && next !== ',' && next !== '=')
        throw badRequest(`invalid field selector: invalid escape sequence in "${selector}"`);
      out += next;
      i += 1;
    } else if (c === '=' || c === ',') {
      throw badRequest(`invalid field selector: unescaped "${c}" in value of "${selector}"`);
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * Parses a field selector against the fields `resource` supports; an unknown field is a 400
 * (`field label not supported`), as the API server answers.
 */
export function parseFieldSelector(selector: string, resource: ResourceType): FieldRequirement[] {
  const requirements: FieldRequirement[] = [];
  if (selector.trim() === '') return requirements;
  for (const term of splitFieldTerms(selector)) {
    const match = /^([^=!\\]+?)\s*(==|!=|=)\s*(.*)$/.exec(term.trim());
    if (!match)
      throw badRequest(`invalid field selector: "${term}" is not field=value, field==value or field!=value`);
    const name = match[1] as string;
    const op = match[2] as string;
    if (name !== 'metadata.name' && name !== 'metadata.namespace' && !(name in resource.fields)) {
      throw badRequest(`field label not supported: ${name}`);
    }
    requirements.push({
      field: name,
      operator: op === '!=' ? '!=' : '=',
      value: unescapeFieldValue(match[3] as string, selector),
    });
  }
  return requirements;
}

export function fieldValue(resource: ResourceType, obj: KubeObject, name: string): string {
  if (name === 'metadata.name') return obj.metadata.name;
  if (name === 'metadata.namespace') return obj.metadata.namespace ?? '';
  const getter = resource.fields[name];
  return getter ? getter(obj) : '';
}

export function fieldsMatch(
  resource: ResourceType,
  requirements: readonly FieldRequirement[],
  obj: KubeObject,
): boolean {
  for (const r of requirements) {
    const equal = fieldValue(resource, obj, r.field) === r.value;
    if (r.operator === '=' ? !equal : equal) return false;
  }
  return true;
}

/** One predicate for the `labelSelector` and `fieldSelector` query parameters of a request. */
export function objectPredicate(
  resource: ResourceType,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
): ObjectPredicate | undefined {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : [];
  const fields = fieldSelector ? parseFieldSelector(fieldSelector, resource) : [];
  if (labels.length === 0 && fields.length === 0) return undefined;
  return (obj) => labelsMatch(labels, obj.metadata.labels) && fieldsMatch(resource, fields, obj);
}
