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
    ["x.co.uk", "*.co.uk"]
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
      const lastWord = words[words.length - 1]!
      const lastStart = label.length - lastWord.length
      fc.pre(label.endsWith(lastWord) && lastStart > 0)
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
      .filter(([, last]) => Masking.labelWords(last).length === 1)
    fc.assert(fc.property(hyphenated, ([first, last, suffix]) => {
      assert.isTrue(Masking.maskHint(`${first}-${last}.${suffix}`).endsWith(`-${last}.${suffix}`))
    }))
  })

  it("masks everything except the first character, the hyphens and the kept last word", () => {
    fc.assert(fc.property(name, (generated) => {
      const { label } = generated
      const words = Masking.labelWords(label)
      const lastWord = words[words.length - 1]!
      const lastStart = label.endsWith(lastWord) && label.length > lastWord.length
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
    ["shop-24-7.io", 3]
  ])("counts %s as %i words", (domain, expected) => {
    assert.strictEqual(Masking.wordCount(domain), expected)
  })

  it("counts at least one word per hyphen-separated part and ignores the suffix", () => {
    fc.assert(fc.property(name, ({ domain, label }) => {
      assert.isAtLeast(Masking.wordCount(domain), label.split("-").length)
    }))
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
    ["startup.io", "io"]
  ])("publishes %s under tld %s", (domain, expected) => {
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
