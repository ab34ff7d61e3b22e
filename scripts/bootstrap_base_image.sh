#!/usr/bin/env bash
# The offline base image (debootstrap + docker import). The script itself ships with passk's container
# sources, so that an installed passk can make the base image too; this is the checkout's entry point.
exec bash "$(dirname "$0")/../containers/bootstrap_base_image.sh" "$@"
