/** A value worked out on first use and kept: one call of `make` at most, whatever it returns (undefined too). */
export function lazy<T>(make: () => T): () => T {
  let made = false
  let value: T
  return () => {
    if (!made) {
      value = make()
      made = true
    }
    return value
  }
}

/** `lazy` per key: one call of `make` per distinct key */
export function lazyBy<K, T>(make: (key: K) => T): (key: K) => T {
  const kept = new Map<K, T>()
  return (key) => {
    if (!kept.has(key)) kept.set(key, make(key))
    return kept.get(key)!
  }
}
