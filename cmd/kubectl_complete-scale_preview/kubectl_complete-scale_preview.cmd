@echo off
rem kubectl (1.26+) runs kubectl_complete-<plugin> from PATH to complete
rem "kubectl scale-preview ..."; the plugin answers cobra's __complete itself.
kubectl scale-preview __complete %*
