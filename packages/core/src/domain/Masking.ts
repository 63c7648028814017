import { getPublicSuffix, parse } from "tldts"
import { dictionaryWords } from "./Dictionary.ts"

/*
 * mask_hint, word_count and length_bucket: the public shape of a name.
 *
 * The public suffix comes from the Public Suffix List (tldts); the label is split into
 * English words by wordsninja's frequency-ranked dictionary. Both are data we do not keep.
 *
 * The split is wordsninja's own (`splitSentence`), word for word: the same dictionary, the same
 * costs, the same choice among equal costs, and a test holds the two together. It is computed
 * here because wordsninja's is most of an import's CPU time (it looks back up to 58 characters
 * from every position, lower-casing a fresh substring each time; docs/decisions/0507-import.md). The
 * trie is built on first use, so a process that never masks (the API server) never holds it.
 */

/*
 * The dictionary as a trie of reversed words, so that the words ending at a position are found
 * by walking back from it one character at a time and stopping where no word continues: a few
 * steps, no substrings. Each node's children sit side by side in flat arrays (`first[node]` to
 * `first[node + 1]` in `symbols` and `children`), found by a short scan: a Map keyed by
 * (node, symbol) over every edge misses the cache at each step (bench/masking.ts).
 */
const ALPHABET = 38
/** a-z → 1-26, 0-9 → 27-36, `'` → 37; splitSentence never passes anything else. */
const symbolOf = (code: number): number =>
  code >= 97 && code <= 122 ? code - 96 : code >= 48 && code <= 57 ? code - 21 : code === 39 ? 37 : 0

interface Trie {
  readonly first: Int32Array
  readonly symbols: Uint8Array
  readonly children: Int32Array
  /** wordsninja's cost of the word ending at a node, NaN where none does. */
  readonly cost: Float64Array
  /** The word's place in the frequency-ranked dictionary (0 = most frequent), -1 where none ends. */
  readonly rank: Int32Array
}

let trie: Trie | undefined
const dictionaryTrie = (): Trie => {
  if (trie !== undefined) return trie
  const words = dictionaryWords()
  // Built with a Map first, then laid out flat.
  const next = new Map<number, number>()
  let nodes = 1
  const ends: Array<[node: number, rank: number]> = []
  words.forEach((word, index) => {
    let node = 0
    for (let i = word.length - 1; i >= 0; i--) {
      const key = node * ALPHABET + symbolOf(word.charCodeAt(i))
      let child = next.get(key)
      if (child === undefined) {
        child = nodes++
        next.set(key, child)
      }
      node = child
    }
    ends.push([node, index])
  })
  const first = new Int32Array(nodes + 1)
  for (const key of next.keys()) first[Math.floor(key / ALPHABET) + 1]! += 1
  for (let node = 0; node < nodes; node++) first[node + 1]! += first[node]!
  const filled = first.slice(0, nodes)
  const symbols = new Uint8Array(next.size)
  const children = new Int32Array(next.size)
  for (const [key, child] of next) {
    const slot = filled[Math.floor(key / ALPHABET)]!++
    symbols[slot] = key % ALPHABET
    children[slot] = child
  }
  const cost = new Float64Array(nodes).fill(Number.NaN)
  const rank = new Int32Array(nodes).fill(-1)
  // wordsninja's loadDictionary: log(rank × log(size)); a repeated word keeps its last rank.
  for (const [node, index] of ends) {
    cost[node] = Math.log((index + 1) * Math.log(words.length))
    rank[node] = index
  }
  trie = { first, symbols, children, cost, rank }
  return trie
}

/** The child of `node` by `symbol`, or -1. */
const childOf = (trie: Trie, node: number, symbol: number): number => {
  const end = trie.first[node + 1]!
  for (let slot = trie.first[node]!; slot < end; slot++) {
    if (trie.symbols[slot] === symbol) return trie.children[slot]!
  }
  return -1
}

/** A dictionary word of a split and its frequency rank. */
interface Piece {
  readonly word: string
  readonly rank: number
}

/** wordsninja's `splitWords`: the cheapest sequence of dictionary words spelling `text`. */
const splitPieces = (text: string): Array<Piece> => {
  const reversed = dictionaryTrie()
  const wordCost = reversed.cost
  const lower = text.toLowerCase()
  const cost = new Float64Array(text.length + 1)
  const length = new Int32Array(text.length + 1)
  const rank = new Int32Array(text.length + 1)
  for (let end = 1; end <= text.length; end++) {
    // The shortest word wins a tie, as wordsninja scans candidates shortest first with `<`.
    let best = Number.MAX_SAFE_INTEGER
    let bestLength = 0
    let bestRank = -1
    let node = 0
    for (let size = 1; size <= end; size++) {
      const child = childOf(reversed, node, symbolOf(lower.charCodeAt(end - size)))
      if (child < 0) break
      node = child
      const ending = wordCost[node]!
      if (Number.isNaN(ending)) continue
      const total = cost[end - size]! + ending
      if (total < best) {
        best = total
        bestLength = size
        bestRank = reversed.rank[node]!
      }
    }
    cost[end] = best
    length[end] = bestLength
    rank[end] = bestRank
  }
  const pieces: Array<Piece> = []
  for (let end = text.length; end > 0;) {
    const size = length[end]!
    // wordsninja loops forever on a character its dictionary lacks; every letter and digit is in it.
    if (size === 0) throw new Error(`no dictionary word ends at ${end} in "${text}"`)
    pieces.push({ word: text.slice(end - size, end), rank: rank[end]! })
    end -= size
  }
  return pieces.reverse()
}

const splitWords = (text: string): Array<string> => splitPieces(text).map((piece) => piece.word)

/** wordsninja's `splitSentence`: runs of letters, digits and apostrophes, each split into words. */
export const splitSentence = (text: string): Array<string> => text.split(/[^a-zA-Z0-9']+/).flatMap(splitWords)

export interface NameParts {
  /** The registrable label without its public suffix, e.g. `green-energy-hub`. */
  readonly label: string
  /** The public suffix with its leading dot, e.g. `.co.uk`. */
  readonly suffix: string
}

/**
 * A listing's name is a lower-case hostname (`ImportLine`'s pattern): tldts need not extract or
 * validate it from a URL first, which took most of a look-up.
 */
const HOSTNAME = { allowPrivateDomains: false, extractHostname: false, validateHostname: false, detectIp: false, mixedInputs: false }

export const splitName = (domain: string): NameParts => {
  const publicSuffix = getPublicSuffix(domain, HOSTNAME) ?? domain.slice(domain.lastIndexOf(".") + 1)
  const suffix = domain.endsWith(`.${publicSuffix}`) ? `.${publicSuffix}` : ""
  return { label: domain.slice(0, domain.length - suffix.length), suffix }
}

/** One label directly under a public suffix: `example.co.uk`, not `www.example.co.uk` nor `co.uk`. */
export const isRegistrable = (name: string): boolean => {
  const parsed = parse(name, { allowPrivateDomains: false })
  return parsed.domain === name && parsed.publicSuffix !== null && parsed.publicSuffix !== name
}

/*
 * What counts as a word. wordsninja spells any text with dictionary entries, so an invented
 * label (`quvexo` → `qu`, `vex`, `o`) comes out as fragments, and keeping "the last word" would
 * disclose letters of a name the caller has not revealed. A split into several pieces is kept
 * only when every piece is a common word; otherwise the letters are one invented word, which a
 * mask never discloses. The dictionary is ranked by frequency in
 * a web corpus full of names and abbreviations, so the shorter a piece, the more common it must
 * be for its presence to mean a word rather than a chance match (decision 0003).
 */
const COMMON_THREE_LETTER_RANK = 5_000
const COMMON_FOUR_LETTER_RANK = 20_000

const DIGITS = /^\d+$/

const isCommonPiece = ({ rank, word }: Piece): boolean =>
  rank >= 0 && word.length >= 3 &&
  (word.length > 4 || rank < (word.length === 3 ? COMMON_THREE_LETTER_RANK : COMMON_FOUR_LETTER_RANK))

/** Whether `word` is a dictionary word common enough to count as a word inside a longer run of letters. */
export const isCommonWord = (word: string): boolean => {
  const reversed = dictionaryTrie()
  const lower = word.toLowerCase()
  let node = 0
  for (let i = lower.length - 1; i >= 0 && node >= 0; i--) node = childOf(reversed, node, symbolOf(lower.charCodeAt(i)))
  return node > 0 && isCommonPiece({ word, rank: reversed.rank[node]! })
}

/** A word of a label: a dictionary word, a run of digits, or letters that are neither (a name). */
export interface Word {
  readonly text: string
  /** A dictionary word or a run of digits, which a mask may disclose; false for invented letters. */
  readonly known: boolean
}

/**
 * Words of one hyphen-free segment: runs of digits, and between them runs of letters, each one
 * dictionary word, several common words, or else one invented word.
 */
const segmentWords = (segment: string): ReadonlyArray<Word> => {
  const words: Array<Word> = []
  let letters: Array<Piece> = []
  const endLetters = () => {
    if (letters.length === 0) return
    if (letters.length === 1 || letters.every(isCommonPiece)) {
      for (const piece of letters) words.push({ text: piece.word, known: true })
    } else {
      words.push({ text: letters.map((piece) => piece.word).join(""), known: false })
    }
    letters = []
  }
  for (const run of segment.split(/[^a-zA-Z0-9']+/)) {
    for (const piece of splitPieces(run)) {
      if (!DIGITS.test(piece.word)) {
        letters.push(piece)
        continue
      }
      endLetters()
      const previous = words[words.length - 1]
      if (previous !== undefined && DIGITS.test(previous.text)) {
        words[words.length - 1] = { text: previous.text + piece.word, known: true }
      } else {
        words.push({ text: piece.word, known: true })
      }
    }
  }
  endLetters()
  return words
}

/** The words of a label, in order, across its hyphens. */
export const labelWords = (label: string): ReadonlyArray<Word> => label.split("-").flatMap(segmentWords)

export const wordCount = (domain: string): number => nameShape(domain).wordCount

/**
 * Keeps the true length, the first character, the hyphens, the public suffix and the last word
 * of the label unless it is an invented word; every other character becomes `*`. When
 * those kept parts would spell the whole label (one word, or a first letter plus a last word
 * that covers the rest) the last word is masked too; a one-character label is masked entirely.
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
  const last = words[words.length - 1]
  const lastWord = last?.known === true ? last.text : ""
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
export const lengthBucket = (domain: string): string => lengthBucketOf(splitName(domain))

/** `lengthBucket` from a name already split. */
export const lengthBucketOf = ({ label }: NameParts): string => {
  const length = label.length
  if (length <= 5) return "1-5"
  if (length <= 10) return "6-10"
  if (length <= 15) return "11-15"
  if (length <= 20) return "16-20"
  return "21+"
}

export const LENGTH_BUCKETS = ["1-5", "6-10", "11-15", "16-20", "21+"] as const

/** The top-level domain as published in `tld`: the public suffix without its dot (`co.uk`). */
export const tldOf = (domain: string): string => tldOfParts(splitName(domain), domain)

/** `tldOf` from a name already split. */
export const tldOfParts = ({ suffix }: NameParts, domain: string): string => (suffix.length > 0 ? suffix.slice(1) : domain)
