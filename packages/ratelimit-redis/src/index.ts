export * as RateLimitRedis from "./RateLimitRedis.ts"
