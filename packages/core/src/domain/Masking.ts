import { parse } from "tldts"
import WordsNinja from "wordsninja"

/*
 * mask_hint, word_count and length_bucket: the public shape of a name.
 *
 * The public suffix comes from the Public Suffix List (tldts); the label is split into
 * English words by wordsninja's frequency-ranked dictionary. Both are data we do not keep.
 */

const ninja = new WordsNinja()
// The dictionary loads synchronously inside the promise executor; the promise only reports it.
void ninja.loadDictionary()

export interface NameParts {
  /** The registrable label without its public suffix, e.g. `green-energy-hub`. */
  readonly label: string
  /** The public suffix with its leading dot, e.g. `.co.uk`. */
  readonly suffix: string
}

export const splitName = (domain: string): NameParts => {
  const parsed = parse(domain, { allowPrivateDomains: false })
  const publicSuffix = parsed.publicSuffix ?? domain.slice(domain.lastIndexOf(".") + 1)
  const suffix = domain.endsWith(`.${publicSuffix}`) ? `.${publicSuffix}` : ""
  return { label: domain.slice(0, domain.length - suffix.length), suffix }
}

/** One label directly under a public suffix: `example.co.uk`, not `www.example.co.uk` nor `co.uk`. */
export const isRegistrable = (name: string): boolean => {
  const parsed = parse(name, { allowPrivateDomains: false })
  return parsed.domain === name && parsed.publicSuffix !== null && parsed.publicSuffix !== name
}

/** Words of one hyphen-free segment; a run of digits counts as one word. */
const segmentWords = (segment: string): ReadonlyArray<string> => {
  if (segment.length === 0) return []
  const tokens: ReadonlyArray<string> = ninja.splitSentence(segment)
  const words: Array<string> = []
  for (const token of tokens) {
    const previous = words.length - 1
    if (previous >= 0 && /^\d+$/.test(token) && /^\d+$/.test(words[previous]!)) {
      words[previous] += token
    } else {
      words.push(token)
    }
  }
  return words
}

/** The words of a label, in order, across its hyphens. */
export const labelWords = (label: string): ReadonlyArray<string> => label.split("-").flatMap(segmentWords)

export const wordCount = (domain: string): number => nameShape(domain).wordCount

/**
 * Keeps the true length, the first character, the hyphens, the public suffix and the last word
 * of the label; every other character becomes `*`. When those kept parts would spell the whole
 * label (one word, or a first letter plus a last word that covers the rest) the last word is
 * masked too; a one-character label is masked entirely.
 */
export const maskHint = (domain: string): string => nameShape(domain).maskHint

/**
 * The public shape of a name: `mask_hint` and `word_count` from one segmentation of the label
 * (segmenting is most of an import's CPU time, so it is done once per name).
 */
export const nameShape = (domain: string): { readonly maskHint: string; readonly wordCount: number } => {
  const { label, suffix } = splitName(domain)
  const kept = new Array<boolean>(label.length).fill(false)
  for (let i = 0; i < label.length; i++) if (label[i] === "-") kept[i] = true
  if (label.length > 1) kept[0] = true

  const words = labelWords(label)
  const lastWord = words[words.length - 1] ?? ""
  const lastWordStart = label.length - lastWord.length
  if (lastWord.length > 0 && label.endsWith(lastWord) && lastWordStart > 0) {
    for (let i = lastWordStart; i < label.length; i++) kept[i] = true
    if (kept.every(Boolean)) {
      for (let i = lastWordStart; i < label.length; i++) kept[i] = label[i] === "-"
    }
  }
  let masked = ""
  for (let i = 0; i < label.length; i++) masked += kept[i] ? label[i] : "*"
  return { maskHint: masked + suffix, wordCount: words.length }
}

/** Length shape of the label (without suffix): the fallback when `mask_hint` predates the backfill. */
export const lengthBucket = (domain: string): string => {
  const length = splitName(domain).label.length
  if (length <= 5) return "1-5"
  if (length <= 10) return "6-10"
  if (length <= 15) return "11-15"
  if (length <= 20) return "16-20"
  return "21+"
}

export const LENGTH_BUCKETS = ["1-5", "6-10", "11-15", "16-20", "21+"] as const

/** The top-level domain as published in `tld`: the public suffix without its dot (`co.uk`). */
export const tldOf = (domain: string): string => {
  const { suffix } = splitName(domain)
  return suffix.length > 0 ? suffix.slice(1) : domain
}
