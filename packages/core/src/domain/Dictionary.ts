import dictionary from "wordsninja/words-en.json" with { type: "json" }

/**
 * wordsninja's English words, most frequent first: the data masking splits names by. Read
 * through this function, not imported where it is used, so that a build may load the large
 * list on first use instead of at start (scripts/build.ts does for the bundle: a process that
 * never masks, such as the API server or a key command, never parses it).
 */
export const dictionaryWords = (): ReadonlyArray<string> => dictionary
