/**
 * Kubernetes name rules (apimachinery `validation`), so the simulator rejects the names a real
 * API server rejects instead of letting code under test depend on names that cannot exist.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `name` is not a DNS-1123 label (at most 63 characters), or undefined when it is one. */
export function dns1123LabelError(name: string): string | undefined {
  if (name.length > 63) return 'must be no more than 63 characters';
  if (!DNS1123_LABEL.test(name)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `name` is not a DNS-1123 subdomain (at most 253 characters), or undefined. */
export function dns1123SubdomainError(name: string): string | undefined {
  if (name.length > 253) return 'must be no more than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(name)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `key` is not a label/annotation key (`[prefix/]name`), or undefined. */
export function qualifiedNameError(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2)
    return 'a qualified name must consist of an optional DNS subdomain prefix and a name, separated by at most one "/"';
  const name = parts.length === 2 ? (parts[1] as string) : key;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix.length === 0) return 'prefix part must be non-empty';
    const prefixError = dns1123SubdomainError(prefix);
    if (prefixError) return `prefix part ${prefixError}`;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `value` is not a label value (empty, or at most 63 characters of the label alphabet). */
export function labelValueError(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}
