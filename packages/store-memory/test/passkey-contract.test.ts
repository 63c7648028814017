import { PasskeyContract } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"

PasskeyContract.suite("memory", StoreMemory.layerStores)
