declare module "wordsninja" {
  export default class WordsNinja {
    loadDictionary(): Promise<unknown>
    splitSentence(text: string, options?: { readonly camelCaseSplitter?: boolean; readonly capitalizeFirstLetter?: boolean }): Array<string>
    addWords(words: string | ReadonlyArray<string>): void
  }
}
