import { Masking } from "@dropshelf/core"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import WordsNinja from "wordsninja"
import { createRequire } from "node:module"

/*
 * mask_hint is what a caller sees of a name it has not revealed (product.md, wire-level
 * choices). The names are built from real English words taken from wordsninja's own
 * frequency list, because the mask keeps "the last word" as wordsninja splits it.
 */

const require = createRequire(import.meta.url)
const dictionary: ReadonlyArray<string> = JSON.parse(
  readFileSync(require.resolve("wordsninja/words-en.json"), "utf8")
)
const commonWords = dictionary.slice(0, 5000).filter((word) => /^[a-z]{2,10}$/.test(word))
/** About 200 words spread over the 5000 most frequent ones, so rare and common words both appear. */
const sampledWords = commonWords.filter((_, index) => index % Math.floor(commonWords.length / 200) === 0)

const suffixes = ["com", "net", "org", "io", "co.uk", "org.uk"] as const

interface GeneratedName {
  readonly domain: string
  readonly label: string
  readonly suffix: string
}

const word = fc.constantFrom(...sampledWords)
const digits = fc.integer({ min: 0, max: 9999 }).map(String)

/** A registrable label of 1-4 words, joined with or without hyphens, optionally ending in digits. */
const label: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(word, { minLength: 1, maxLength: 4 }),
    fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    fc.option(fc.tuple(digits, fc.boolean()), { nil: undefined })
  )
  .map(([words, hyphens, trailing]) => {
    let text = words[0]!
    for (let i = 1; i < words.length; i++) text += (hyphens[i] ? "-" : "") + words[i]!
    if (trailing !== undefined) text += (trailing[1] ? "-" : "") + trailing[0]
    return text
  })

const singleLetter = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz".split(""))

const name: fc.Arbitrary<GeneratedName> = fc
  .tuple(fc.oneof({ arbitrary: label, weight: 9 }, { arbitrary: singleLetter, weight: 1 }), fc.constantFrom(...suffixes))
  .map(([label, suffix]) => ({ domain: `${label}.${suffix}`, label, suffix: `.${suffix}` }))

const maskedLabel = (generated: GeneratedName): string =>
  Masking.maskHint(generated.domain).slice(0, generated.label.length)

describe("Masking.maskHint", () => {
  it("has the words to build names from", () => {
    assert.isAtLeast(sampledWords.length, 150)
  })

  it.each([
    ["bestcoffeeshop.com", "b*********shop.com"],
    ["green-energy-hub.co.uk", "g****-******-hub.co.uk"],
    ["coffee.com", "c*****.com"],
    ["x.com", "*.com"],
    ["a-b.com", "a-*.com"],
    ["x.co.uk", "*.co.uk"],
    // An invented word is one word: its first letter and nothing more, however it splits.
    ["quvexo.io", "q*****.io"],
    ["trelvik.com", "t******.com"],
    ["shopify.com", "s******.com"],
    ["quvexo24.com", "q*****24.com"],
    ["24quvexo.com", "2*******.com"],
    ["best-quvexo.com", "b***-******.com"],
    ["thebestpizza.com", "t******pizza.com"],
    ["news24.com", "n***24.com"]
  ])("masks %s as %s", (domain, expected) => {
    assert.strictEqual(Masking.maskHint(domain), expected)
  })

  it("has the same length as the domain", () => {
    fc.assert(fc.property(name, ({ domain }) => {
      assert.strictEqual(Masking.maskHint(domain).length, domain.length)
    }))
  })

  it("keeps the public suffix", () => {
    fc.assert(fc.property(name, ({ domain, suffix }) => {
      assert.isTrue(Masking.maskHint(domain).endsWith(suffix), `${Masking.maskHint(domain)} keeps ${suffix}`)
    }))
  })

  it("keeps the first character unless the label is one character", () => {
    fc.assert(fc.property(name, (generated) => {
      const masked = maskedLabel(generated)
      assert.strictEqual(masked[0], generated.label.length === 1 ? "*" : generated.label[0])
    }))
  })

  it("keeps every hyphen in place and masks nothing into a hyphen", () => {
    fc.assert(fc.property(name, (generated) => {
      const masked = maskedLabel(generated)
      for (let i = 0; i < generated.label.length; i++) {
        assert.strictEqual(masked[i] === "-", generated.label[i] === "-", `position ${i} of ${masked}`)
      }
    }))
  })

  it("never equals the name and never discloses every letter of the label", () => {
    fc.assert(fc.property(name, (generated) => {
      const masked = Masking.maskHint(generated.domain)
      assert.notStrictEqual(masked, generated.domain)
      const label = masked.slice(0, generated.label.length)
      assert.isTrue([...label].some((char) => char === "*"), `${masked} hides at least one character`)
    }))
  })

  it("shows each character either as itself or as *", () => {
    fc.assert(fc.property(name, (generated) => {
      const masked = maskedLabel(generated)
      for (let i = 0; i < generated.label.length; i++) {
        assert.include([generated.label[i], "*"], masked[i])
      }
    }))
  })

  it("keeps the last word when the first character, hyphens and last word do not spell the whole label", () => {
    fc.assert(fc.property(name, (generated) => {
      const { label } = generated
      const words = Masking.labelWords(label)
      const last = words[words.length - 1]!
      const lastWord = last.text
      const lastStart = label.length - lastWord.length
      fc.pre(last.known && label.endsWith(lastWord) && lastStart > 0)
      const wouldShowAll = [...label].every((char, i) => i === 0 || char === "-" || i >= lastStart)
      const masked = maskedLabel(generated)
      if (wouldShowAll) {
        assert.isTrue([...masked.slice(lastStart)].some((char) => char === "*"), `${masked} hides part of ${lastWord}`)
      } else {
        assert.strictEqual(masked.slice(lastStart), lastWord)
      }
    }))
  })

  it("keeps the last hyphen-separated word of a multi-part name", () => {
    const hyphenated = fc
      .tuple(word, word, fc.constantFrom(...suffixes))
      .filter(([, last]) => Masking.labelWords(last).length === 1 && Masking.labelWords(last)[0]!.known)
    fc.assert(fc.property(hyphenated, ([first, last, suffix]) => {
      assert.isTrue(Masking.maskHint(`${first}-${last}.${suffix}`).endsWith(`-${last}.${suffix}`))
    }))
  })

  it("masks everything except the first character, the hyphens and the kept last word", () => {
    fc.assert(fc.property(name, (generated) => {
      const { label } = generated
      const words = Masking.labelWords(label)
      const last = words[words.length - 1]!
      const lastWord = last.known ? last.text : ""
      const lastStart = lastWord.length > 0 && label.endsWith(lastWord) && label.length > lastWord.length
        ? label.length - lastWord.length
        : label.length
      const masked = maskedLabel(generated)
      for (let i = 1; i < lastStart; i++) {
        if (label[i] !== "-") assert.strictEqual(masked[i], "*", `position ${i} of ${masked}`)
      }
    }))
  })
})

describe("Masking.wordCount", () => {
  it.each([
    ["bestcoffeeshop.com", 3],
    ["green-energy-hub.co.uk", 3],
    ["coffee.com", 1],
    ["coffee123.com", 2],
    ["shop-24-7.io", 3],
    ["quvexo.io", 1],
    ["trelvik.com", 1],
    ["zentrova.com", 1],
    ["solvana.com", 1],
    ["shopify.com", 1],
    ["quvexo24.com", 2],
    ["best-quvexo.com", 2]
  ])("counts %s as %i words", (domain, expected) => {
    assert.strictEqual(Masking.wordCount(domain), expected)
  })

  it("counts at least one word per hyphen-separated part and ignores the suffix", () => {
    fc.assert(fc.property(name, ({ domain, label }) => {
      assert.isAtLeast(Masking.wordCount(domain), label.split("-").length)
    }))
  })
})

/*
 * What counts as a word. wordsninja spells any letters with dictionary entries, so a made-up
 * brand name came out as fragments (`quvexo` → `qu`, `vex`, `o`) whose "last word" the mask
 * then disclosed. Real compounds must keep their words; invented ones are one word.
 */
describe("Masking: invented words and real compounds", () => {
  const inDictionary = new Set(dictionary)

  /** Whether `text` is a run of two or more common words, found exhaustively (not by wordsninja's split). */
  const spellsCommonWords = (text: string): boolean => {
    // pieces[i]: the fewest common words spelling text.slice(0, i), Infinity where none does.
    const pieces = new Array<number>(text.length + 1).fill(Infinity)
    pieces[0] = 0
    for (let end = 1; end <= text.length; end++) {
      for (let start = 0; start < end; start++) {
        if (pieces[start]! < Infinity && Masking.isCommonWord(text.slice(start, end))) {
          pieces[end] = Math.min(pieces[end]!, pieces[start]! + 1)
        }
      }
    }
    return pieces[text.length]! < Infinity
  }

  /** Brandable syllables: an onset, a vowel, sometimes a closing consonant. */
  const syllable = fc
    .tuple(
      fc.constantFrom(..."bcdfghjklmnpqrstvwxz".split(""), "br", "tr", "kr", "pl", "sk", "st", "qu", "th", "vr", "zh"),
      fc.constantFrom(..."aeiouy".split("")),
      fc.constantFrom("", "", "", "n", "r", "l", "x", "k", "s", "m", "v", "z")
    )
    .map(([onset, vowel, coda]) => onset + vowel + coda)

  /** A made-up word: no dictionary entry, and no run of common words either. */
  const invented = fc
    .array(syllable, { minLength: 2, maxLength: 4 })
    .map((syllables) => syllables.join(""))
    .filter((text) => !inDictionary.has(text) && !spellsCommonWords(text))

  const onlyFirstLetter = (label: string) => label[0] + "*".repeat(label.length - 1)

  it("counts an invented label as one word and masks all of it but its first letter", () => {
    fc.assert(fc.property(invented, fc.constantFrom(...suffixes), (label, suffix) => {
      const domain = `${label}.${suffix}`
      assert.strictEqual(Masking.wordCount(domain), 1, Masking.labelWords(label).map((w) => w.text).join("|"))
      assert.strictEqual(Masking.maskHint(domain), `${onlyFirstLetter(label)}.${suffix}`)
    }), { numRuns: 1000 })
  })

  it("never discloses an invented word beside digits or hyphenated words", () => {
    const withNeighbour = fc.tuple(
      invented,
      fc.oneof(digits.map((d) => ({ before: d, after: "" })), digits.map((d) => ({ before: "", after: d }))),
      fc.option(word, { nil: undefined })
    )
    fc.assert(fc.property(withNeighbour, ([name, { after, before }, hyphenated]) => {
      const label = (hyphenated === undefined ? "" : `${hyphenated}-`) + before + name + after
      const masked = Masking.maskHint(`${label}.com`)
      const at = label.length - after.length - name.length
      assert.strictEqual(masked.slice(at, at + name.length), at === 0 ? onlyFirstLetter(name) : "*".repeat(name.length))
      assert.include(Masking.labelWords(label).map((w) => w.text), name)
    }), { numRuns: 500 })
  })

  /** Words a domain label is made of; each is a common word on its own. */
  const vocabulary = (
    "best coffee shop green energy cheap flights pizza home plans travel guide garden music news daily city " +
    "river market solar water fresh local smart money online games books health family kids dogs cats food " +
    "wine beer bike cars auto farm golden silver blue black happy free quick easy royal urban digital tech " +
    "media design studio photo sport fitness yoga beach ocean island mountain forest valley lake park hotel " +
    "tours rent loans bank cash trade gold stone light sound story paper phone radio camera film movie dance " +
    "party wedding gift flower fruit bread cake salt honey cheese chicken fish grill kitchen table chair " +
    "window floor sleep dream night morning summer winter"
  ).split(" ")

  it("has a vocabulary of common words", () => {
    for (const word of vocabulary) assert.isTrue(Masking.isCommonWord(word), word)
  })

  it.each([
    ["bestcoffee.com", 2],
    ["news24.com", 2],
    ["greenhouseplans.com", 2],
    ["cheapflights.com", 2],
    ["thebestpizza.com", 3],
    ["bitcoinwallet.com", 2],
    ["carinsurance.com", 2],
    ["dogtraining.com", 2],
    ["weddingphotos.net", 2],
    ["organicfood.org", 2],
    ["techblog.io", 2],
    ["solarpanels.co.uk", 2],
    ["yogastudio.com", 2],
    ["usedcars.com", 2],
    ["citytours.com", 2],
    ["sunsetvillas.com", 2],
    ["newyorkpizza.com", 3],
    ["schoolsupplies.com", 2],
    ["guitarlessons.com", 2],
    ["stockmarket.io", 2],
    ["handmadejewelry.com", 2],
    ["homedecor.com", 2],
    ["cheapflightdeals.com", 3],
    ["freeonlinegames.com", 3],
    ["bestpetfood.com", 3],
    ["usedcarparts.com", 3],
    ["24hourfitness.com", 3],
    ["coffee123.com", 2],
    ["best4pets.com", 3]
  ])("keeps the words of the real compound %s (%i)", (domain, expected) => {
    assert.strictEqual(Masking.wordCount(domain), expected)
  })

  it("keeps every word of a compound of common words that the segmenter recovers", () => {
    const compound = fc.array(fc.constantFrom(...vocabulary), { minLength: 2, maxLength: 3 })
    fc.assert(fc.property(compound, fc.constantFrom(...suffixes), (words, suffix) => {
      const label = words.join("")
      fc.pre(Masking.splitSentence(label).join(" ") === words.join(" "))
      assert.deepStrictEqual(Masking.labelWords(label), words.map((text) => ({ text, known: true })))
      assert.isTrue(Masking.maskHint(`${label}.${suffix}`).endsWith(`${words[words.length - 1]}.${suffix}`))
    }), { numRuns: 500 })
  })
})

describe("Masking.lengthBucket", () => {
  it.each([
    ["x.com", "1-5"],
    ["abcde.com", "1-5"],
    ["abcdef.com", "6-10"],
    ["abcdefghij.co.uk", "6-10"],
    ["abcdefghijk.com", "11-15"],
    ["abcdefghijklmno.com", "11-15"],
    ["abcdefghijklmnop.com", "16-20"],
    ["abcdefghijklmnopqrst.com", "16-20"],
    ["abcdefghijklmnopqrstu.com", "21+"],
    ["abcde.org.uk", "1-5"]
  ])("buckets %s as %s (the label length, suffix excluded)", (domain, expected) => {
    assert.strictEqual(Masking.lengthBucket(domain), expected)
  })

  it("always answers one of the published buckets", () => {
    fc.assert(fc.property(name, ({ domain }) => {
      assert.include(Masking.LENGTH_BUCKETS, Masking.lengthBucket(domain))
    }))
  })
})

describe("Masking.tldOf", () => {
  it.each([
    ["x.co.uk", "co.uk"],
    ["bestcoffeeshop.com", "com"],
    ["green-energy-hub.org.uk", "org.uk"],
    ["startup.io", "io"],
    ["myblog.github.io", "io"],
    ["city.kawasaki.jp", "kawasaki.jp"],
    ["shop.zzzunknown", "zzzunknown"]
  ])("publishes %s under tld %s (the ICANN section, its wildcards and exceptions; else the last label)", (domain, expected) => {
    assert.strictEqual(Masking.tldOf(domain), expected)
  })

  it("is the public suffix without its dot", () => {
    fc.assert(fc.property(name, ({ domain, suffix }) => {
      assert.strictEqual(Masking.tldOf(domain), suffix.slice(1))
    }))
  })
})

describe("Masking.splitSentence", () => {
  // The oracle: wordsninja's own segmenter, which Masking reimplements for speed.
  const ninja = new WordsNinja()
  const ready = ninja.loadDictionary()
  const letters = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789".split("")), maxLength: 24 })
  const text = fc.oneof(
    label,
    letters,
    fc.tuple(label, letters).map(([a, b]) => a + b),
    fc.string({ unit: fc.constantFrom(..."abcXYZ019'-. é".split("")), maxLength: 20 })
  )

  it("splits exactly as wordsninja does: names, random letters and digits, separators, capitals", async () => {
    await ready
    fc.assert(fc.property(text, (input) => {
      assert.deepStrictEqual(Masking.splitSentence(input), ninja.splitSentence(input))
    }), { numRuns: 2000 })
  })

  it.each(["bestcoffeeshop", "greenenergyhub", "expertsexchange", "a", "", "x9k2q", "thequickbrownfoxjumps"])(
    "splits %s as wordsninja does",
    async (input) => {
      await ready
      assert.deepStrictEqual(Masking.splitSentence(input), ninja.splitSentence(input))
    }
  )
})
