import { StoreContract } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"

StoreContract.suite("memory", StoreMemory.layerStores)
