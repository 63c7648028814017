import { AuthorizationContract } from "@dropshelf/core/testing"
import { StoreMemory } from "@dropshelf/store-memory"

AuthorizationContract.suite("memory", StoreMemory.layerStores)
